"""SSIM outside each reader's region, computed in the background once per answer version.

Kept apart from the answer (which is never updated): the figure is derived from the answer's
region and the two images, and can always be computed again.
"""

from PIL import Image
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import insert_new
from app.images.files import ImageNotFound
from app.images.metrics import roi_preservation
from app.images.roi import Roi
from app.studies.images import item_image
from app.studies.models import Answer, Assignment, RoiMetric, StudyItem

BATCH = 50


def pending(session: Session, limit: int = BATCH) -> list[int]:
    done = select(col(RoiMetric.answer_id))
    return list(session.scalars(select(col(Answer.id)).where(
        col(Answer.roi).is_not(None), col(Answer.retracted).is_(False), col(Answer.id).not_in(done))
        .order_by(col(Answer.id)).limit(limit)))


def measure(session: Session, answer_id: int) -> RoiMetric:
    answer = session.get(Answer, answer_id)
    assert answer is not None and answer.roi is not None
    try:
        roi = Roi.model_validate_json(answer.roi)
        item = session.scalars(select(StudyItem).join(
            Assignment, col(Assignment.item_id) == StudyItem.id).where(
            col(Assignment.id) == answer.assignment_id)).one()
        original, edited = item_image(session, item, "original"), item_image(session, item, "edit")
        result = roi_preservation(original.read_bytes(), edited.read_bytes(), roi.mask)
    except (ImageNotFound, OSError, ValueError, ValidationError, Image.DecompressionBombError) as error:
        return RoiMetric(answer_id=answer_id, error=str(error)[:500])
    return RoiMetric(answer_id=answer_id, ssim_outside_roi=result.ssim_outside_roi,
                     changed_outside_roi=result.changed_outside_roi, side=result.side)


def compute_pending(engine: Engine, limit: int = BATCH) -> int:
    """Measure up to ``limit`` answers' regions; returns how many were stored."""
    with Session(engine) as session:
        rows = [measure(session, answer_id) for answer_id in pending(session, limit)]
        insert_new(session, RoiMetric, rows)  # one measured by another worker meanwhile stands
        session.commit()
        return len(rows)
