"""UIDs that are the same on every export, and a pseudonymous Patient ID per source image.

Each UID is derived from what it names (the source image, the task's run, the round) with
pydicom's generate_uid, under the operator's UID root, or, when none is set, as a 2.25 UID
(ISO/IEC 9834-8: a name-based UUID as a decimal number) which needs no registered root. The same edit
exported twice gets the same SOP Instance UID, so a PACS stores it once.
"""

import hashlib
import uuid
from dataclasses import dataclass

from pydicom.uid import generate_uid

# The namespace of every name-based UUID this app derives a 2.25 UID from.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://medbanana-review/dicom")


@dataclass(frozen=True)
class Uids:
    root: str = ""  # empty: 2.25 UIDs

    def uid(self, *names: str) -> str:
        # One joined source: generate_uid concatenates its sources bare, so ("a", "bc") and
        # ("ab", "c") would name the same UID.
        named = chr(0).join(names)
        if self.root:
            return str(generate_uid(prefix=f"{self.root}.", entropy_srcs=[f"medbanana{chr(0)}{named}"]))
        # generate_uid makes a 2.25 UID from a random UUID whatever it is given: a name-based
        # UUID (version 5) is the same for the same names.
        return f"2.25.{uuid.uuid5(NAMESPACE, named).int}"

    def patient_id(self, source_key: str) -> str:
        """A pseudonym per source image: the same for its original and every edit of it, and
        derived from nothing a reader of the file could turn back into a name."""
        digest = hashlib.sha256(f"{self.root}|patient|{source_key}".encode()).hexdigest()
        return f"MB-{digest[:16].upper()}"
