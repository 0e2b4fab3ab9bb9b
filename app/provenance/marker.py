"""The one way an edit leaves the app: ``Marker.edit`` reads the edit and its original and
returns the edit marked (app/provenance/marks.py). Every export and the admin's image route
take a Marker; blinded reads never do, so nothing of the marking reaches a reader."""

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from sqlmodel import Session

from app.images.files import (
    ImageFile,
    ImageKind,
    ImageNotFound,
    ImageSize,
    resolve_image,
    sized_file,
    sniff_image,
    write_cached,
)
from app.provenance.facts import edit_facts
from app.provenance.marks import UnmarkableImage, check_signs, mark_edit
from app.provenance.signing import SigningIdentity, signing_identity
from app.settings import Settings


@dataclass
class Marker:
    identity: SigningIdentity
    # The last original read (its file's identity, its bytes): an export writes a task's
    # rounds one after another.
    _original: tuple[str, bytes] | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> "Marker":
        """SettingsError (naming the setting) when the operator's pair cannot sign."""
        identity = signing_identity(settings)
        check_signs(identity, "MEDBANANA_C2PA_CERT" if not identity.self_signed
                    else f"the self-signed certificate in {settings.var_dir / 'c2pa'}")
        return cls(identity)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.identity.chain_pem).hexdigest()[:16]

    def note(self) -> dict[str, str]:
        """What an export's manifest says of its edits' marking."""
        return {"edits": "each edit carries a signed C2PA manifest and the IPTC digital source "
                         "type in its XMP: it is a synthetic image, not a patient's",
                "signed_with": self.identity.source}

    def edit(self, session: Session, attempt_id: int, data: bytes | None = None, *,
             without_original: bool = False) -> bytes:
        """The edit (``data``, or its stored file) marked. ImageNotFound when it or its
        original cannot be read; UnmarkableImage (an ImageNotFound) when either is not an
        image. ``without_original``: an original that cannot be read is named as missing
        instead (the admin's screens; an export leaves such an edit out)."""
        facts = edit_facts(session, attempt_id)
        if data is None:
            data = resolve_image(session, ImageKind.attempt, attempt_id).read_bytes()
        original: bytes | None
        try:
            original = self._original_of(session, facts.source_image_id)
            if without_original and sniff_image(original) is None:
                original = None
        except ImageNotFound:
            if not without_original:
                raise
            original = None
        return mark_edit(data, original, facts, self.identity)

    def _original_of(self, session: Session, source_id: int) -> bytes:
        # Kept by the file's identity (its id, size and time), so a replaced file is read
        # again; read into a local and stored whole, since a server's threads share one
        # marker and each must sign with the original it read.
        image = resolve_image(session, ImageKind.source, source_id)
        cached = self._original
        if cached is None or cached[0] != image.etag:
            cached = (image.etag, image.read_bytes())
            self._original = cached
        return cached[1]

    def served(self, session: Session, attempt_id: int, image: ImageFile, size: ImageSize,
               cache_dir: Path) -> Path:
        """The edit as the admin's screens and downloads get it, at a display size or whole:
        marked once and kept in the cache under this signer's fingerprint."""
        suffix = ".jpeg" if size is not ImageSize.full else (image.path.suffix.lower() or ".jpeg")
        target = cache_dir / "marked" / self.fingerprint / size.value / image.etag[:2] / \
            f"{image.etag}{suffix}"
        if target.is_file():
            return target
        data = (image.read_bytes() if size is ImageSize.full
                else sized_file(image, size, cache_dir).read_bytes())
        marked = self.edit(session, attempt_id, data, without_original=True)
        return write_cached(target, lambda out: out.write(marked))


__all__ = ["ImageNotFound", "Marker", "UnmarkableImage"]
