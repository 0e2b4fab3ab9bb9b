"""Metrics for every attempt with an image, computed in the background and stored once.

The in-process worker (and `medbanana metrics`) takes attempts that have an image and no
metrics yet, a batch at a time, so an import or a pipeline round is followed by its
metrics without anyone waiting for them. Rows measured before the pixel digest was kept get
it in the same passes.
"""

from collections.abc import Callable

from PIL import Image
from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import insert_new
from app.images.files import ImageKind, ImageNotFound, resolve_image, source_of_attempt
from app.images.final_metrics import sync_final
from app.images.metrics import pixel_digest, preservation
from app.models import Attempt, AttemptMetric, Task

BATCH = 50


def pending(session: Session, limit: int = BATCH) -> list[int]:
    done = select(col(AttemptMetric.attempt_id))
    return list(session.scalars(select(col(Attempt.id)).where(
        col(Attempt.image_present).is_(True), col(Attempt.id).not_in(done))
        .order_by(col(Attempt.id)).limit(limit)))


def pending_count(session: Session) -> int:
    """Attempts to measure, and measured ones still without their pixel digest."""
    done = select(col(AttemptMetric.attempt_id))
    return int(session.scalar(select(func.count()).select_from(Attempt).where(
        col(Attempt.image_present).is_(True), col(Attempt.id).not_in(done))) or 0) + int(
        session.scalar(select(func.count()).select_from(AttemptMetric).where(*_UNDIGESTED)) or 0)


# A measured row with figures and no digest: measured before digests were kept.
_UNDIGESTED = (col(AttemptMetric.pixels_sha256).is_(None), col(AttemptMetric.error).is_(None))


def measure(session: Session, attempt_id: int) -> AttemptMetric:
    try:
        edited = resolve_image(session, ImageKind.attempt, attempt_id)
        original = resolve_image(session, ImageKind.source, source_of_attempt(session, attempt_id))
        pixels = edited.read_bytes()
        result = preservation(original.read_bytes(), pixels)
        digest = pixel_digest(pixels)
    except (ImageNotFound, OSError, ValueError, Image.DecompressionBombError) as error:
        return AttemptMetric(attempt_id=attempt_id, error=str(error)[:500])
    return AttemptMetric(attempt_id=attempt_id, psnr=result.psnr, ssim=result.ssim,
                         ssim_outside=result.ssim_outside,
                         changed_fraction=result.changed_fraction,
                         changed_regions=result.changed_regions, side=result.side,
                         pixels_sha256=digest)


def fill_digests(session: Session, limit: int = BATCH) -> int:
    """Give up to ``limit`` rows measured without a digest theirs; an image gone or unreadable
    since keeps its figures and gets the digest of nothing, so it is not read again and is
    equal to no other image's."""
    ids = list(session.scalars(select(col(AttemptMetric.attempt_id)).where(*_UNDIGESTED)
                               .order_by(col(AttemptMetric.attempt_id)).limit(limit)))
    for attempt_id in ids:
        try:
            digest = pixel_digest(resolve_image(session, ImageKind.attempt, attempt_id).read_bytes())
        except (ImageNotFound, OSError, ValueError, Image.DecompressionBombError):
            digest = f"unreadable:{attempt_id}"
        session.execute(update(AttemptMetric).where(col(AttemptMetric.attempt_id) == attempt_id)
                        .values(pixels_sha256=digest))
    return len(ids)


def compute_pending(engine: Engine, limit: int = BATCH,
                    on_progress: Callable[[int], None] | None = None) -> int:
    """Measure up to ``limit`` attempts without metrics; returns how many were stored."""
    with Session(engine) as session:
        ids = pending(session, limit)
        rows = []
        for n, attempt_id in enumerate(ids, start=1):
            rows.append(measure(session, attempt_id))
            if on_progress:
                on_progress(n)
        # Another worker may have measured some of these meanwhile: its rows stand.
        insert_new(session, AttemptMetric, rows)
        sync_final(session, col(Task.thumb_attempt_id).in_(ids))
        filled = fill_digests(session, limit - len(rows)) if len(rows) < limit else 0
        session.commit()
        return len(rows) + filled
