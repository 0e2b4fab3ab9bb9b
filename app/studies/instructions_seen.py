"""Study instructions a reader cannot miss: shown in full on their first case, and again on
the next case they open after the instructions changed (an admin may edit them until the
first answer). Folded away at the foot of the panel, a reader might never open them."""

import hashlib

from sqlalchemy import update
from sqlmodel import Session, col

from app.studies.models import Study, StudyReader


def instructions_due(session: Session, study: Study, user_id: int) -> bool:
    """Whether this reader is to be shown the study's instructions now; recorded as shown."""
    text = study.instructions or ""
    if not text.strip():
        return False
    digest = hashlib.sha256(text.encode()).hexdigest()
    changed = session.execute(update(StudyReader).where(
        col(StudyReader.study_id) == study.id, col(StudyReader.user_id) == user_id,
        (col(StudyReader.instructions_seen).is_(None))
        | (col(StudyReader.instructions_seen) != digest)).values(instructions_seen=digest))
    session.commit()
    return bool(changed.rowcount)  # type: ignore[attr-defined]
