"""An adaptive study in the database: its pool of source images, frozen when it is made, and
its batches of draws, each recorded with the state it was drawn from.

A batch is drawn in two steps. ``draw_batch`` records the batch, its draws and the items of
newly drawn images (no reader sees an item without a read in their list). ``place_batch``
then mixes the batch's reads into each reader's list, among the reads they have not reached,
so nothing on screen tells when or why a case was drawn; the case a reader has open, and every
one before it, keeps its place. Between the two the caller draws the new items' images, so a
first view is never slower than another (app/studies/previews.py).
"""

import json
import random
import secrets

import numpy as np
from sqlalchemy import func, select, update
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, recorded_filter
from app.designs.adaptive.budget import Budget, edit_budget
from app.designs.adaptive.prior import (
    UNIFORM_SHARE,
    Observed,
    Pool,
    PoolEdit,
    PoolImage,
    State,
    draw,
)
from app.image_order import apart
from app.models import AttemptMetric, Task, User
from app.studies.judged_pool import admitted, judged_pool
from app.studies.models import Assignment, Study, StudyBatch, StudyDraw, StudyItem, StudyReader
from app.studies.pool import verdicts_of_record
from app.studies.practice_apart import KeptApart, kept_apart
from app.studies.reader_instruction import reader_instructions
from app.studies.worklist import next_open


def pool_images(session: Session, case_filter: CaseFilter,
                apart: KeptApart | None = None) -> list[PoolImage]:
    """Every source image holding a judged edit the filter admits, with those edits (round,
    verdict of record and its weighted score), in image order, edits in attempt order: from
    the kept judged pool (app/studies/judged_pool.py). ``apart``: none that practice keeps
    out (app/studies/practice_apart.py)."""
    pool = judged_pool(session)
    at = admitted(session, pool, case_filter)
    if apart is not None:
        at = at[apart.mask(pool.attempt_id[at], pool.image[at])]
    if not len(at):
        return []
    at = at[np.lexsort((pool.attempt_id[at], pool.image[at]))]
    images, starts = np.unique(pool.image[at], return_index=True)
    ends = [*starts[1:], len(at)]
    metrics = {int(a): (c, k) for a, c, k in session.execute(select(
        col(AttemptMetric.attempt_id), col(AttemptMetric.changed_fraction),
        col(AttemptMetric.ssim_outside))).all()}
    found = []
    for image, start, end in zip(images, starts, ends, strict=True):
        edits = tuple(PoolEdit(int(pool.attempt_id[i]), int(pool.task_id[i]),
                               pool.value("disease", int(i)), int(pool.round[i]),
                               bool(pool.passed[i]),
                               None if np.isnan(pool.score[i]) else float(pool.score[i]),
                               *metrics.get(int(pool.attempt_id[i]), (None, None)))
                      for i in at[start:end])
        found.append(PoolImage(int(image), pool.value("modality", int(at[start])), edits))
    return found


def planned_budget(session: Session, case_filter: CaseFilter, draws: int, readers: int,
                   readers_per_case: int | None) -> Budget | None:
    """What a budget of ``draws`` edit draws would read from the filter's pool; None when the
    pool is empty."""
    found = pool_images(session, case_filter)
    if not found:
        return None
    return edit_budget(sum(len(p.edits) for p in found), draws, readers, readers_per_case)


def frozen_pool(session: Session, study: Study) -> Pool:
    """The study's pool as it was made: the images recorded then, with their edits now."""
    raw = json.loads(study.selection)
    kept = set(raw.get("pool_images", []))
    # Practice may have shown some of its edits since (to its readers, or their verdicts to
    # anyone): those leave the pool before the next draw, as they would have at the start.
    readers = session.scalars(select(col(StudyReader.user_id)).where(
        col(StudyReader.study_id) == study.id)).all()
    return Pool([p for p in pool_images(session, recorded_filter(raw.get("filter", {})),
                                        kept_apart(session, readers))
                 if p.image in kept])


def batches(session: Session, study: Study) -> list[StudyBatch]:
    return list(session.scalars(select(StudyBatch).where(col(StudyBatch.study_id) == study.id)
                                .order_by(col(StudyBatch.batch))))


def draws_made(session: Session, study: Study) -> int:
    """The draws the study has made: of edits, or of images for a study made before."""
    return session.scalar(select(func.count()).select_from(StudyDraw).where(
        col(StudyDraw.study_id) == study.id)) or 0


def draw_batch(session: Session, study: Study, pool: Pool, observed: list[Observed],
               number: int, size: int) -> tuple[StudyBatch, list[StudyItem]]:
    """Records batch ``number`` (the unique key makes a second drawer fail here, before
    anything else is written), its draws and the items of images not drawn before. The
    caller commits."""
    assert study.id is not None
    state = State(batch=number, size=size, seed=study.seed, uniform_share=UNIFORM_SHARE,
                  observed=[{"image": o.image, "overturned": list(o.overturned)} for o in observed])
    positions, q = draw(pool, state)
    weights = (1 / len(pool)) / q
    bound = float((weights * pool.sizes).max())
    batch = StudyBatch(study_id=study.id, batch=number, bound=bound,
                       state=json.dumps(state.as_dict() | {"pool_images": len(pool)}))
    session.add(batch)
    session.flush()
    for k, at in enumerate(positions):
        session.add(StudyDraw(study_id=study.id, batch=number, position=k,
                              source_image_id=pool.images[at].image, probability=float(q[at]),
                              pool_images=len(pool)))
    known = set(session.scalars(select(col(StudyItem.attempt_id)).where(
        col(StudyItem.study_id) == study.id)))
    new: list[tuple[PoolImage, PoolEdit]] = []
    for at in dict.fromkeys(positions):  # an image drawn twice is read once
        for edit in pool.images[at].edits:
            if edit.attempt_id not in known:
                new.append((pool.images[at], edit))
                known.add(edit.attempt_id)
    record = verdicts_of_record(session, [e.attempt_id for _, e in new])
    instructions = reader_instructions(session, [(e.task_id, e.attempt_id) for _, e in new])
    items = [StudyItem(study_id=study.id, task_id=edit.task_id, attempt_id=edit.attempt_id,
                       stratum=image.stratum, judge_verdict_id=record.get(edit.attempt_id),
                       uid=secrets.token_hex(12), reader_instruction=instructions[edit.attempt_id])
             for image, edit in new]
    session.add_all(items)
    session.flush()
    return batch, items


def unplaced(session: Session, study: Study) -> list[StudyItem]:
    """The study's items in nobody's list yet: a batch's new items until it is placed."""
    placed = select(col(Assignment.item_id)).where(col(Assignment.study_id) == study.id)
    return list(session.scalars(select(StudyItem).where(
        col(StudyItem.study_id) == study.id, col(StudyItem.id).not_in(placed))
        .order_by(col(StudyItem.id))))


def place_batch(session: Session, study: Study, batch: StudyBatch) -> bool:
    """Each reader's reads of the batch's new items, mixed at random among the reads they have
    not reached yet, and the batch marked ready; False when another request placed it first
    (the batch is claimed by a conditional update, which a second placer waits on and then
    finds done). The caller commits."""
    assert study.id is not None
    claimed = session.execute(update(StudyBatch).where(
        col(StudyBatch.id) == batch.id, col(StudyBatch.ready).is_(False)).values(ready=True))
    if claimed.rowcount == 0:  # type: ignore[attr-defined]
        return False
    items = unplaced(session, study)
    readers = list(session.scalars(select(StudyReader).where(col(StudyReader.study_id) == study.id)
                                   .order_by(col(StudyReader.user_id))))
    ids = [r.user_id for r in readers]
    k = study.readers_per_case or len(ids)
    draw_order = random.Random(f"{study.order_secret}:batch:{batch.batch}")
    draw_order.shuffle(items)
    start = draw_order.randrange(len(ids)) if ids else 0
    mine: dict[int, list[StudyItem]] = {uid: [] for uid in ids}
    for index, item in enumerate(items):
        for j in range(k):
            mine[ids[(start + index * k + j) % len(ids)]].append(item)
    for reader in readers:
        _mix_in(session, study, reader, mine[reader.user_id], batch.batch)
    return True


def _mix_in(session: Session, study: Study, reader: StudyReader, items: list[StudyItem],
            number: int) -> None:
    if not items:
        return
    user = session.get(User, reader.user_id)
    assert user is not None and study.id is not None
    frontier = next_open(session, study, user)
    last = session.scalar(select(func.max(Assignment.sequence)).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == reader.user_id)) or 0
    # The open case and every case before it keep their number: a page a reader has open
    # still posts its answer to the right case.
    keep_to = frontier.sequence if frontier is not None else last
    tail = list(session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == reader.user_id,
        col(Assignment.sequence) > keep_to).order_by(col(Assignment.sequence))))
    new = [Assignment(study_id=study.id, user_id=reader.user_id, item_id=i.id or 0, sequence=0)
           for i in items]
    mixed = tail + new
    random.Random(f"{study.order_secret}:mix:{reader.user_id}:{number}").shuffle(mixed)
    # No two edits of one source image in a row, from the open case on.
    image_of = _images_of(session, [a.item_id for a in mixed]
                          + ([frontier.item_id] if frontier is not None else []))
    order = apart(list(range(len(mixed))),
                  {i: image_of.get(a.item_id) for i, a in enumerate(mixed)},
                  before=image_of.get(frontier.item_id) if frontier is not None else None)
    mixed = [mixed[i] for i in order]
    # Out of the way first (the sequence is unique per reader), then into place.
    if tail:
        session.execute(update(Assignment).where(col(Assignment.id).in_([a.id for a in tail]))
                        .values(sequence=-col(Assignment.sequence)))
        session.flush()
        session.expire_all()
    for offset, assignment in enumerate(mixed, start=keep_to + 1):
        assignment.sequence = offset
        session.add(assignment)
    session.flush()


def _images_of(session: Session, item_ids: list[int]) -> dict[int, int]:
    """Each item's source image."""
    return {int(item): int(image) for item, image in session.execute(
        select(col(StudyItem.id), col(Task.source_image_id)).join(
            Task, col(Task.id) == StudyItem.task_id).where(col(StudyItem.id).in_(item_ids))).all()
        if image is not None}


def latest_steer(session: Session, study: Study) -> str | None:
    """How the study's last batch was drawn, in words (the evidence rule's reason); None for
    a study without batches, or drawn before the rule recorded one."""
    found = batches(session, study)
    if not found:
        return None
    state = json.loads(found[-1].state)
    return f"batch {found[-1].batch + 1}: {state['reason']}" if "reason" in state else None
