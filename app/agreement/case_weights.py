"""What each case of a study weighs in its figures: 1 where the figures are the sample's; its
stratum's weight to the pool where a fixed study was made to estimate the pool
(app/studies/allocation.py); and in an adaptive study, the inverse probabilities of the
draws that brought it, summed (an edit drawn twice counts twice, as in the Hansen-Hurwitz
estimator its anytime-valid figure is), so that the report's fixed-sample figures estimate
what its sequence does."""

from collections import defaultdict
from collections.abc import Callable

from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Task
from app.studies.draw_plan import case_weights
from app.studies.models import Design, Study, StudyDraw, StudyItem

Weigh = Callable[[int, str], float]  # (item id, stratum) -> weight


def weights_of_cases(session: Session, study: Study) -> Weigh:
    if Design(study.design).draws_in_batches:
        drawn = _drawn(session, study)
        return lambda item_id, _stratum: drawn.get(item_id, 0.0)
    strata = case_weights(study)
    if strata is None:
        return lambda _item, _stratum: 1.0
    return lambda _item, stratum: strata.get(stratum, 0.0)


def _drawn(session: Session, study: Study) -> dict[int, float]:
    """Item id -> the sum of its draws' weights, (1 / N) / q, scaled to a mean of 1 per draw
    (the scale cancels in every ratio; it keeps the numbers readable)."""
    rows = session.execute(select(col(StudyDraw.attempt_id), col(StudyDraw.source_image_id),
                                  col(StudyDraw.probability), col(StudyDraw.pool_images))
                           .where(col(StudyDraw.study_id) == study.id)).all()
    items = session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id),
                                   col(StudyItem.task_id)).where(
        col(StudyItem.study_id) == study.id)).all()
    by_attempt = {attempt: item for item, attempt, _ in items}
    weights: dict[int, float] = defaultdict(float)
    total = 0.0
    image_draws: dict[int, float] = defaultdict(float)
    for attempt, image, probability, pool in rows:
        w = (1 / pool) / probability
        total += w
        if attempt is not None:
            if attempt in by_attempt:
                weights[by_attempt[attempt]] += w
        else:  # a study made when source images were drawn: every edit of the image
            image_draws[int(image)] += w
    if image_draws:
        task_image = dict(session.execute(select(col(Task.id), col(Task.source_image_id)).where(
            col(Task.id).in_([t for _, _, t in items]))).all())
        for item, _, task in items:
            weights[item] += image_draws.get(int(task_image.get(task) or -1), 0.0)
    mean = total / len(rows) if rows else 1.0
    return {item: w / mean for item, w in weights.items()}
