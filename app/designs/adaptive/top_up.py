"""Keeping an adaptive study's reading lists from running dry.

After each answer the reading screen asks for a top-up in the background. A new batch is
drawn when some reader has at most half a batch's worth of reads left, while the study is open,
its budget of draws is not spent and its targets are not all met (then it may stop, and
drawing more would spend reads it does not need). The batch is recorded first (its number
is unique per study, so of two requests at once one draws and the other finds it taken),
its new items' images are drawn next, and only then are its reads placed in the readers'
lists: a reader never meets a case before its images are ready. A batch left half done by a
restart is finished by the next top-up.
"""

import json
import logging
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.agreement.completion import overturned
from app.agreement.monitoring import parse_targets
from app.agreement.reads import load
from app.agreement.service import watch_for
from app.claims import claimed
from app.designs.adaptive.batches import (
    batches,
    draw_batch,
    draws_made,
    frozen_pool,
    place_batch,
    unplaced,
)
from app.designs.adaptive.draws import Read, draw_edit_batch, frozen_edits, rule_target
from app.designs.adaptive.prior import Observed, Pool
from app.studies.draw_plan import draw_plan, draws_edits
from app.studies.models import Design, Study, StudyBatch, StudyItem, StudyStatus
from app.studies.previews import draw_items
from app.studies.worklist import study_progress

logger = logging.getLogger(__name__)


def top_up(engine: Engine, study_id: int, cache_dir: Path) -> StudyBatch | None:
    """Draw and place the next batch if one is due; the batch placed, else None. Logged and
    swallowed on failure: a reader's answer is stored already, and the next answer asks again."""
    try:
        # Once at a time across the server's processes (app/claims.py); the answer that
        # asked while another drew finds the batch drawn, or asks again at the next.
        with claimed(engine, ("top-up", study_id)) as mine:
            return _top_up(engine, study_id, cache_dir) if mine else None
    except Exception:
        logger.exception("adaptive study %s: the next batch could not be drawn", study_id)
        return None


def _top_up(engine: Engine, study_id: int, cache_dir: Path) -> StudyBatch | None:
    with Session(engine) as session:
        study = session.get(Study, study_id)
        if study is None or not Design(study.design).draws_in_batches or study.status != StudyStatus.open:
            return None
        unfinished = next((b for b in batches(session, study) if not b.ready), None)
        if unfinished is not None:
            return _finish(session, study, unfinished, cache_dir)
        reason = _why_not(session, study)
        if reason:
            logger.debug("adaptive study %s: no batch drawn: %s", study_id, reason)
            return None
        plan = draw_plan(study)
        size = min(plan.batch, plan.budget - draws_made(session, study))
        number = len(batches(session, study))
        try:
            if draws_edits(study):
                seen = _observed_edits(session, study)
                made = batches(session, study)
                previous = json.loads(made[-1].state) if made else None
                batch, _ = draw_edit_batch(session, study, frozen_edits(session, study), seen,
                                           number, size, rule_target(parse_targets(study.targets)),
                                           previous)
            else:  # a study made when whole source images were drawn
                pool = frozen_pool(session, study)
                observed = _observed(session, study, pool)
                batch, _ = draw_batch(session, study, pool, observed, number, size)
            session.commit()
        except IntegrityError:  # another request drew this batch a moment ago
            session.rollback()
            return None
        logger.info("adaptive study %s: batch %s drawn (%s draws)", study_id, number, size)
        return _finish(session, study, batch, cache_dir)


def more_coming(session: Session, study: Study) -> bool:
    """Whether this study will give its readers more cases: open, drawing in batches, with a
    batch being made, or draws left and a target not yet met. A fast reader who ran out
    while the next batch was drawn was thanked for finishing the study."""
    if not Design(study.design).draws_in_batches or study.status != StudyStatus.open:
        return False
    if any(not b.ready for b in batches(session, study)):
        return True
    if draws_made(session, study) >= draw_plan(study).budget:
        return False
    found = watch_for(session, study)
    return not (found is not None and found.precise_enough)


def _why_not(session: Session, study: Study) -> str | None:
    if draws_made(session, study) >= draw_plan(study).budget:
        return "its budget of draws is spent"
    progress = study_progress(session, study)
    if not progress:
        return "no readers"
    reads_per_batch = max(1, sum(p.total for _, p in progress) // max(1, len(batches(session, study)))
                          // len(progress))
    left = min(p.total - p.done for _, p in progress)
    # Half a batch ahead: enough to draw and prepare the next one before anyone runs dry,
    # late enough that it learns from most of the batch before.
    if 2 * left > reads_per_batch:
        return f"every reader has more than half a batch ({reads_per_batch} reads) left"
    # Last, as it reads every answer: the figures.
    found = watch_for(session, study)
    if found is not None and found.precise_enough:
        return "every target is met: the study may stop"
    return None


def _observed_edits(session: Session, study: Study) -> dict[int, Read]:
    """Every drawn edit whose reads are all in and agree on a consensus: its attempt, whether
    the readers overturned the judge, and its draws' weight."""
    data = load(session, study)
    flips = overturned(data, study.primary_question, by_item=True)
    weight = {c.item_id: c.weight for c in data.cases}
    attempts = dict(session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id)).where(
        col(StudyItem.study_id) == study.id)).all())
    return {int(attempts[item]): Read(flip, weight.get(item, 1.0)) for item, flip in flips.items()
            if flip is not None and item in attempts}


def _observed(session: Session, study: Study, pool: Pool) -> list[Observed]:
    """Every completed image the study drew, with whether its edits were overturned."""
    flips = overturned(load(session, study), study.primary_question)
    items = dict(session.execute(select(col(StudyItem.attempt_id), col(StudyItem.id)).where(
        col(StudyItem.study_id) == study.id)).all())
    found = []
    for image in pool.images:
        at = [items.get(e.attempt_id) for e in image.edits]
        if at and all(i is not None and i in flips for i in at):
            found.append(Observed(image.image, tuple(flips[i] for i in at if i is not None)))
    return found


def _finish(session: Session, study: Study, batch: StudyBatch,
            cache_dir: Path) -> StudyBatch | None:
    """Draw the images of the items in nobody's list yet, then place them; None when another
    request placed the batch meanwhile."""
    items = unplaced(session, study)
    draw_items(session, study, items, cache_dir)
    if not place_batch(session, study, batch):
        session.rollback()
        return None
    session.commit()
    session.refresh(batch)
    logger.info("adaptive study %s: batch %s placed (%s new cases)", study.id, batch.batch, len(items))
    return batch
