"""Metrics for every attempt with an image, computed in the background and stored once.

The in-process worker (and `medbanana metrics`) takes attempts that have an image and no
metrics yet, a batch at a time, so an import or a pipeline round is followed by its
metrics without anyone waiting for them.
"""

from collections.abc import Callable

from PIL import Image
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import insert_new
from app.images.files import ImageKind, ImageNotFound, resolve_image, source_of_attempt
from app.images.final_metrics import sync_final
from app.images.metrics import preservation
from app.models import Attempt, AttemptMetric, Task

BATCH = 50


def pending(session: Session, limit: int = BATCH) -> list[int]:
    done = select(col(AttemptMetric.attempt_id))
    return list(session.scalars(select(col(Attempt.id)).where(
        col(Attempt.image_present).is_(True), col(Attempt.id).not_in(done))
        .order_by(col(Attempt.id)).limit(limit)))


def pending_count(session: Session) -> int:
    done = select(col(AttemptMetric.attempt_id))
    return int(session.scalar(select(func.count()).select_from(Attempt).where(
        col(Attempt.image_present).is_(True), col(Attempt.id).not_in(done))) or 0)


def measure(session: Session, attempt_id: int) -> AttemptMetric:
    try:
        edited = resolve_image(session, ImageKind.attempt, attempt_id)
        original = resolve_image(session, ImageKind.source, source_of_attempt(session, attempt_id))
        result = preservation(original.read_bytes(), edited.read_bytes())
    except (ImageNotFound, OSError, ValueError, Image.DecompressionBombError) as error:
        return AttemptMetric(attempt_id=attempt_id, error=str(error)[:500])
    return AttemptMetric(attempt_id=attempt_id, psnr=result.psnr, ssim=result.ssim,
                         ssim_outside=result.ssim_outside,
                         changed_fraction=result.changed_fraction,
                         changed_regions=result.changed_regions, side=result.side)


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
        session.commit()
        return len(rows)
