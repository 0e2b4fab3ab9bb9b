"""Making a pairwise study: pairs of one kind drawn per stratum with the seed, both images of
each checked on disk, and each item's other edit kept beside it in the same transaction."""

import random
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image
from sqlalchemy import func
from sqlmodel import Session, col, select

from app.designs.pairwise.answers import PAIR_TOOLS
from app.designs.pairwise.pairs import EditTable, Pair, PairKind, PairPool, edit_table, pair_pool
from app.fingerprints import METRICS, fingerprint, once_per_transaction
from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.images.metrics import pixel_digest
from app.memo import Memo
from app.models import Attempt, AttemptMetric, User
from app.studies.design import StudyError, StudyPlan, create_study_of, plan_apart
from app.studies.models import Design, Study, StudyItem, StudyPair
from app.studies.pool import (
    Candidate,
    StratumRow,
    check_facets,
    stratum_label,
    verdicts_of_record,
)


def create_pairwise_study(session: Session, plan: StudyPlan, created_by: User) -> Study:
    """StudyError (422, naming the field) when the plan's kind of pairs is unknown, when it
    has no pairs, or when a drawn pair's image is missing; nothing is written then."""
    kind = _kind(plan)
    problem = check_facets(Design.pairwise, plan.strata_facets)
    if problem:
        raise StudyError(problem, field="facets")
    # Only the pair's own tools are kept with it: a difference map would show which edit is
    # the item's own (the later round, the rejected one).
    plan = replace(plan, design=Design.pairwise,
                   viewer_tools=tuple(t for t in plan.viewer_tools if t in PAIR_TOOLS))
    pool = pair_pool(session, kind, plan.case_filter)
    if not len(pool):
        raise StudyError(f"no pairs of this kind ({kind}) among the tasks the filter admits",
                         field="kind")
    facets = plan.strata_facets
    # Practice keeps apart both edits of a pair: either shown would give the pair away.
    apart = plan_apart(session, plan)
    edits = pool.edits
    kept = (apart.mask(edits.attempt[pool.first], edits.image[pool.first])
            & apart.mask(edits.attempt[pool.second], edits.image[pool.second]))
    by_stratum = {key: members[kept[members]] for key, members in pool.by_stratum(facets).items()}
    wanted = {k: n for k, n in plan.per_stratum.items() if n > 0} if facets else {"": plan.total or 0}
    drawn: dict[str, list[Pair]] = {}
    for key, count in wanted.items():
        members = by_stratum.get(key, np.zeros(0, dtype=np.int64))
        if len(members) < count:
            label = f"stratum {key.replace('/', ' · ')}" if facets else "the filter"
            raise StudyError(f"{label} has {len(members)} pairs; {count} were asked", field="strata")
        # Positions drawn from the stratum's pairs in order: random.sample picks the same
        # positions whatever the sequence holds, so this is the draw of the list of pairs.
        rng = random.Random(f"{plan.seed}:sample:{key}")
        chosen = [pool.pair(int(members[i])) for i in rng.sample(range(len(members)), count)]
        drawn[key] = sorted(chosen, key=lambda p: (p.task_id, p.second.attempt_id))
    _check_images(session, [p for chosen in drawn.values() for p in chosen])
    sample = {key: [Candidate(p.task_id, p.second.attempt_id,
                              {f: p.value(f) for f in facets}, p.source_image_id) for p in chosen]
              for key, chosen in drawn.items()}
    by_second = {p.second.attempt_id: p for chosen in drawn.values() for p in chosen}

    def keep_pairs(session: Session, study: Study) -> None:
        items = session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id))
                                .where(col(StudyItem.study_id) == study.id)).all()
        record = verdicts_of_record(session, [p.first.attempt_id for p in by_second.values()])
        session.add_all(StudyPair(
            item_id=item_id, kind=by_second[attempt_id].kind.value,
            first_attempt_id=by_second[attempt_id].first.attempt_id,
            first_verdict_id=record.get(by_second[attempt_id].first.attempt_id),
            first_run_id=by_second[attempt_id].first.run_id,
            second_run_id=by_second[attempt_id].second.run_id,
            first_round=by_second[attempt_id].first.round,
            second_round=by_second[attempt_id].second.round) for item_id, attempt_id in items)

    pool_sizes = {key: len(by_stratum.get(key, ())) for key in wanted}
    return create_study_of(session=session, plan=plan, sample=sample, created_by=created_by,
                           made_from={"pair_kind": kind.value, "pool": pool_sizes}
                           | ({"practice_left_out": int((~kept).sum())} if (~kept).any() else {}),
                           with_items=keep_pairs)


def _kind(plan: StudyPlan) -> PairKind:
    if plan.pair_kind not in set(PairKind):
        raise StudyError(f"the pairs are one of {', '.join(PairKind)}", field="kind")
    return PairKind(plan.pair_kind)


def pair_strata(session: Session, plan: StudyPlan) -> tuple[list[StratumRow], list[int]]:
    """Each stratum of the plan's kind of pairs with its pool, and the pairs per source
    image: what the form offers to draw (nothing for an unknown kind or facet: the draw
    refuses those, naming the field). Finding the pairs
    reads every edit (most of a second on the whole data set), so the edits the filter admits
    are kept until the data change, and every kind and every choice of strata is counted from
    them; the draw itself reads them afresh."""
    if plan.pair_kind not in set(PairKind) or check_facets(Design.pairwise, plan.strata_facets):
        return [], []
    key = (_pool_key(session, plan), plan.pair_kind, tuple(plan.strata_facets))

    def count() -> tuple[list[StratumRow], list[int]]:
        pool = _kept_pool(session, plan)
        facets = plan.strata_facets
        rows = [StratumRow(k, stratum_label(k, facets), len(members))
                for k, members in sorted(pool.by_stratum(facets).items())]
        per_image = np.unique(pool.edits.image[pool.first], return_counts=True)[1]
        return rows, [int(n) for n in per_image]

    # Each change of kind or strata is counted once per state of the data, then kept: the
    # form is redrawn on every choice a coordinator makes.
    return _strata.get_or_make(key, count)


@dataclass(frozen=True)
class LeftOut:
    """What the form says of the pairs of one kind that are not in its pool, or not yet
    known to belong there."""

    missing: int = 0  # their original image is missing
    identical: int = 0  # their two edits are one image
    unchecked: int = 0  # kept, their images not yet read by the metrics worker


def pairs_left_out(session: Session, plan: StudyPlan) -> LeftOut:
    if plan.pair_kind not in set(PairKind):
        return LeftOut()
    pool = _kept_pool(session, plan)
    return LeftOut(pool.missing, pool.identical, pool.unchecked)


def _pool_key(session: Session, plan: StudyPlan) -> tuple[object, ...]:
    """The state of the data a pool rests on. The data's fingerprint changes with a new
    task, run or verdict and when a run ends (its accepted round is set then, no id
    changing); a round added to a running run changes only the newest attempt; each edit the
    metrics worker measures or digests may leave a pair out, and is counted by the metrics
    table's triggers (migration 0040). The form asks for the strata and for what was left
    out in one request: the state is read once per transaction."""
    return once_per_transaction(session, ("pairwise", repr(plan.case_filter)),
                                lambda: _state(session, plan))


def _state(session: Session, plan: StudyPlan) -> tuple[object, ...]:
    return (*fingerprint(session, select(func.max(col(Attempt.id))).scalar_subquery(), METRICS),
            repr(plan.case_filter))


def _kept_pool(session: Session, plan: StudyPlan) -> PairPool:
    key = _pool_key(session, plan)
    kind = PairKind(plan.pair_kind or PairKind.consecutive)
    return _pools.get_or_make((key, kind), lambda: PairPool.of(
        _tables.get_or_make(key, lambda: edit_table(session, plan.case_filter)), kind))


# A few filters' edits: each is columns of some megabytes on the whole data set. Their pools
# share those columns and add two arrays of positions each; the strata are small lists.
_tables: Memo[EditTable] = Memo(8)
_pools: Memo[PairPool] = Memo(8)
_strata: Memo[tuple[list[StratumRow], list[int]]] = Memo(32)


def _check_images(session: Session, chosen: list[Pair]) -> None:
    """Both edits and the original of every drawn pair are on disk: a pair that cannot be
    shown would be skipped by readers in a way that depends on what it holds. A pair the
    metrics worker has not read yet is compared here, so that no study holds two identical
    edits even while the worker is behind."""
    unchecked = _unchecked(session, chosen)
    identical = 0
    for pair in chosen:
        try:
            paths = [resolve_image(session, ImageKind.attempt, attempt)
                     for attempt in (pair.first.attempt_id, pair.second.attempt_id)]
            resolve_image(session, ImageKind.source, pair.source_image_id)
            if pair.second.attempt_id in unchecked and len(
                    {pixel_digest(path.read_bytes()) for path in paths}) == 1:
                identical += 1
        except ImageNotFound as error:
            raise StudyError(f"a drawn pair's image is missing ({error}); restore it or narrow "
                             "the filter", field="kind") from None
        except (OSError, ValueError, Image.DecompressionBombError) as error:
            raise StudyError(f"a drawn pair's image cannot be read ({error}); narrow the filter",
                             field="kind") from None
    if identical:
        raise StudyError(f"{identical} drawn {'pair shows' if identical == 1 else 'pairs show'} "
                         "two identical edits that the image checks have not reached yet; let "
                         "them finish (the app's worker, or `medbanana metrics`) and draw again",
                         field="kind")


def _unchecked(session: Session, chosen: list[Pair]) -> set[int]:
    """The second edits of the drawn pairs with an edit whose pixels have no digest yet."""
    attempts = {a for p in chosen for a in (p.first.attempt_id, p.second.attempt_id)}
    digested = set(session.scalars(select(col(AttemptMetric.attempt_id)).where(
        col(AttemptMetric.attempt_id).in_(attempts), col(AttemptMetric.pixels_sha256).is_not(None))))
    return {p.second.attempt_id for p in chosen
            if not {p.first.attempt_id, p.second.attempt_id} <= digested}
