"""Making a pairwise study: pairs of one kind drawn per stratum with the seed, both images of
each checked on disk, and each item's other edit kept beside it in the same transaction."""

import random
from dataclasses import replace

from sqlalchemy import func
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.designs.pairwise.answers import PAIR_TOOLS
from app.designs.pairwise.pairs import Pair, PairKind, pairs, strata
from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.memo import Memo
from app.models import Attempt, JudgeVerdict, Run, User
from app.studies.design import StudyError, StudyPlan, create_study_of
from app.studies.models import Design, Study, StudyItem, StudyPair
from app.studies.pool import Candidate, verdicts_of_record


def create_pairwise_study(*, session: Session, plan: StudyPlan, kind: str, created_by: User,
                          up_to: int | None = None) -> Study:
    """StudyError (422, naming the field) when the kind is unknown, when it has no pairs, or
    when a drawn pair's image is missing; nothing is written then. ``up_to``: the plan's
    counts are this many per stratum (or in all, without strata), or all a stratum holds
    when it holds fewer."""
    if kind not in set(PairKind):
        raise StudyError(f"the pairs are one of {', '.join(PairKind)}", field="kind")
    if up_to is not None:
        counts = pool_counts(session, kind, plan.case_filter, plan.strata_facets)
        if plan.strata_facets:
            plan = replace(plan, per_stratum={k: min(up_to, n) for k, n in counts.items()})
        else:
            plan = replace(plan, total=min(up_to, counts.get("", up_to)))
    # Only the pair's own tools are kept with it: a difference map would show which edit is
    # the item's own (the later round, the rejected one).
    plan = replace(plan, design=Design.pairwise,
                   viewer_tools=tuple(t for t in plan.viewer_tools if t in PAIR_TOOLS))
    found = pairs(session, PairKind(kind), plan.case_filter)
    if not found:
        raise StudyError(f"no pairs of this kind ({kind}) among the tasks the filter admits",
                         field="kind")
    facets = plan.strata_facets
    by_stratum = strata(found, facets) if facets else {"": found}
    wanted = {k: n for k, n in plan.per_stratum.items() if n > 0} if facets else {"": plan.total or 0}
    drawn: dict[str, list[Pair]] = {}
    for key, count in wanted.items():
        pool = by_stratum.get(key, [])
        if len(pool) < count:
            label = f"stratum {key.replace('/', ' · ')}" if facets else "the filter"
            raise StudyError(f"{label} has {len(pool)} pairs; {count} were asked", field="strata")
        rng = random.Random(f"{plan.seed}:sample:{key}")
        drawn[key] = sorted(rng.sample(pool, count), key=lambda p: (p.task_id, p.second.attempt_id))
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

    pool_sizes = {key: len(by_stratum.get(key, [])) for key in wanted}
    return create_study_of(session=session, plan=plan, sample=sample, created_by=created_by,
                           made_from={"pair_kind": kind, "pool": pool_sizes},
                           with_items=keep_pairs)


def pool_counts(session: Session, kind: str, case_filter: CaseFilter,
                facets: tuple[str, ...]) -> dict[str, int]:
    """How many pairs of the kind each stratum holds: what the form offers to draw from.
    Finding the pairs reads every attempt (seconds on the whole data set), so the counts are
    kept until an attempt, a run or a verdict is added; the draw itself reads them afresh."""
    if kind not in set(PairKind):
        return {}
    stamp = tuple(session.scalar(select(func.max(column))) for column in
                  (col(Attempt.id), col(Run.id), col(JudgeVerdict.id)))
    key = (session.get_bind().engine.url.render_as_string(hide_password=True), kind,
           repr(case_filter), facets, stamp)

    def count() -> dict[str, int]:
        found = pairs(session, PairKind(kind), case_filter)
        by = strata(found, facets) if facets else {"": found}
        return {k: len(v) for k, v in sorted(by.items())}

    return _counts.get_or_make(key, count)


_counts: Memo[dict[str, int]] = Memo(32)


def _check_images(session: Session, chosen: list[Pair]) -> None:
    """Both edits and the original of every drawn pair are on disk: a pair that cannot be
    shown would be skipped by readers in a way that depends on what it holds."""
    for pair in chosen:
        try:
            for attempt in (pair.first.attempt_id, pair.second.attempt_id):
                resolve_image(session, ImageKind.attempt, attempt)
            resolve_image(session, ImageKind.source, pair.source_image_id)
        except ImageNotFound as error:
            raise StudyError(f"a drawn pair's image is missing ({error}); restore it or narrow "
                             "the filter", field="kind") from None
