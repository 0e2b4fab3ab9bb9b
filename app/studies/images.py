"""A study item's images as the reading and adjudication screens show them: by the item's
opaque uid, never by the ids behind it, which their errors never name either."""

from dataclasses import replace
from pathlib import Path

from sqlmodel import Session

from app.images.diffmap import drawn_diff
from app.images.files import ImageFile, ImageKind, ImageNotFound, ImageSize, resolve_image
from app.models import Task
from app.studies.models import StudyItem

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
