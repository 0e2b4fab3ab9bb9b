"""A study item's images as the reading and adjudication screens show them: by the item's
opaque uid, never by the ids behind it, which their errors never name either."""

import hashlib
import io
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image
from sqlmodel import Session

from app.images.blinded import QUALITY, SIZE_STEP, blinded_jpeg, shown_format
from app.images.diffmap import drawn_diff
from app.images.files import (
    ImageFile,
    ImageKind,
    ImageNotFound,
    ImageSize,
    resolve_image,
    write_cached,
)
from app.images.metrics import CLICK_TOLERANCE, change_region
from app.models import Task
from app.studies.models import Shows, StudyItem

BLINDED_MISSING = "this image is missing on disk"


def item_image(session: Session, item: StudyItem, which: str) -> ImageFile:
    """The item's edit, or its original."""
    try:
        if which == "edit":
            image = resolve_image(session, ImageKind.attempt, item.attempt_id)
        else:
            task = session.get(Task, item.task_id)
            if task is None:
                raise ImageNotFound(f"no task {item.task_id}")
            image = resolve_image(session, ImageKind.source, task.source_image_id)
    except ImageNotFound:
        raise ImageNotFound(BLINDED_MISSING) from None
    return replace(image, hide=BLINDED_MISSING)


def item_diff(session: Session, item: StudyItem, size: ImageSize, cache_dir: Path) -> tuple[Path, str]:
    """The item's difference map."""
    try:
        return drawn_diff(item_image(session, item, "original"), item_image(session, item, "edit"),
                          size, cache_dir)
    except ImageNotFound:
        raise ImageNotFound("this image is missing on disk or cannot be decoded") from None


def shown_image(session: Session, item: StudyItem, cache_dir: Path) -> tuple[Path, str]:
    """The one image a real-or-edited case shows (its edit or its task's original, as the
    item says), re-encoded blind (app/images/blinded.py) at the original's format, cached;
    with its tag. The cache file is ours and named by a hash; no reader sees its name."""
    original = item_image(session, item, "original")
    shown = original if item.shows == Shows.original else item_image(session, item, "edit")
    tag = hashlib.blake2b(f"{original.etag}:{shown.etag}:{QUALITY}:{SIZE_STEP}".encode(),
                          digest_size=12).hexdigest()
    target = cache_dir / "blinded" / tag[:2] / f"{tag}.jpeg"
    if target.is_file():
        return target, tag
    try:
        size, mode = shown_format(original.read_bytes())
        data = blinded_jpeg(shown.read_bytes(), size, mode)
    except (OSError, Image.DecompressionBombError):
        raise ImageNotFound("this image is missing on disk or cannot be decoded") from None
    return write_cached(target, lambda out: out.write(data)), tag


def item_change_region(session: Session, item: StudyItem, cache_dir: Path) -> np.ndarray | None:
    """Where a click on the item's edit finds its change (app/images/metrics.py), or None when
    nothing changed measurably; cached on disk, since every reader's click on the item asks
    the same question and a 1024-pixel pair takes a few hundred milliseconds to measure."""
    original, edited = item_image(session, item, "original"), item_image(session, item, "edit")
    tag = hashlib.blake2b(f"{original.etag}:{edited.etag}:{CLICK_TOLERANCE}".encode(),
                          digest_size=12).hexdigest()
    target = cache_dir / "change-regions" / tag[:2] / f"{tag}.npz"
    if target.is_file():
        with np.load(target) as stored:
            return stored["region"] if bool(stored["changed"]) else None
    try:
        region = change_region(original.read_bytes(), edited.read_bytes())
    except (OSError, ValueError, Image.DecompressionBombError):
        raise ImageNotFound("this image is missing on disk or cannot be decoded") from None
    stored = io.BytesIO()
    np.savez_compressed(stored, changed=region is not None,
                        region=region if region is not None else np.zeros((0, 0), bool))
    write_cached(target, lambda out: out.write(stored.getvalue()))
    return region
