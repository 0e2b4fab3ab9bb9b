"""Creating a study: which edits, stratified and seeded, and who reads them in which order.

Everything random is drawn from ``random.Random`` seeded with the study seed and a label,
so the same plan on the same data always gives the same sample and the same orders. Each
item freezes the judge verdict it is compared with (app/studies/pool.py: the verdict of record).
"""

import json
import random
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlmodel import Session, col

from app.cases.filters import CaseFilter
from app.errors import Invalid
from app.models import Role, User
from app.studies.allocation import design_effect, stratum_weights
from app.studies.design_traits import default_design
from app.studies.draw_plan import CASE_UNIT
from app.studies.judged_pool import admitted, judged_pool, stratum_keys, values_of
from app.studies.known_answers import check_share, draw_known, kinds_of, planned_known
from app.studies.models import Design, Reveal, Study
from app.studies.originals import originals_shown
from app.studies.pool import (
    Candidate,
    admitted_candidates,
    check_facets,
    pool_by_stratum,
    practice_left_out,
    stratum_label,
)
from app.studies.practice import Requirement, check_requirement, enrol
from app.studies.practice_apart import KeptApart, check_enrolment, kept_apart
from app.studies.reading_setup import checked_instructions
from app.studies.study_rows import ItemRow, item_rows, known_rows, write_items_and_worklists
from app.studies.targets import check_targets, field_of
from app.studies.viewer_tools import VIEWER_TOOLS, tools_json
from pipeline.vocabulary import QUESTIONS

MAX_CASES = 20_000


class StudyError(Invalid):
    """A plan that cannot be carried out; the message says what to change."""


@dataclass
class StudyPlan:
    name: str
    case_filter: CaseFilter
    reader_ids: list[int]
    design: Design = field(default_factory=default_design)
    seed: int = 42
    # Facets to stratify on and the units wanted per stratum key ("fail/add/chest_xray");
    # without facets, ``total`` units from the whole pool.
    strata_facets: tuple[str, ...] = ()
    per_stratum: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    primary_question: str = "overall"
    readers_per_case: int | None = None
    repeat_fraction: float = 0.0
    blinded: bool = True
    reveal: Reveal = Reveal.never
    show_instructions: bool = True
    # What readers are told, and the image tools they get (both frozen at the first answer).
    instructions: str = ""
    viewer_tools: tuple[str, ...] = tuple(VIEWER_TOOLS)
    # The sample-size plan behind the counts (app/studies/planner.py), recorded as given.
    planned: dict[str, Any] | None = None
    # A follow-up drawn for a quality estimate (app/quality/follow_up.py): the study whose
    # frame it samples, and the part of that frame (facet -> value) it samples.
    follow_up_of: int | None = None
    part: dict[str, str] | None = None
    # A real-or-edited study: the share of its cases that show the original, per stratum.
    original_share: float = 0.5
    # An adaptive study: source images per batch (``total`` is the most it may draw).
    batch_images: int = 10
    # A pairwise study: the kind of pairs it draws (app/designs/pairwise/pairs.py, PairKind).
    pair_kind: str | None = None
    # The equivalence margin of "the judge is within the readers' agreement", and the
    # half-width wanted per endpoint (app/studies/targets.py).
    margin: float = 0.05
    targets: dict[str, float] = field(default_factory=dict)
    # The share of each reader's reads that are known-answer cases (app/studies/known_answers.py).
    known_share: float = 0.0
    # What each reader must reach in a practice study first (app/studies/practice.py).
    qualification: Requirement | None = None


def validate_plan(plan: StudyPlan) -> None:
    if not plan.name.strip() or len(plan.name) > 200:
        raise StudyError("give the study a name of at most 200 characters", field="name")
    problem = check_facets(plan.design, plan.strata_facets)
    if problem:
        raise StudyError(problem)
    adaptive = plan.design.draws_in_batches
    wanted = (plan.total or 0) if adaptive or not plan.strata_facets else sum(plan.per_stratum.values())
    if not 0 < wanted <= MAX_CASES or any(n < 0 for n in plan.per_stratum.values()):
        raise StudyError(f"ask for between 1 and {MAX_CASES} cases in all, none below 0")
    if plan.primary_question not in QUESTIONS:
        raise StudyError(f"the primary question is one of {', '.join(QUESTIONS)}", field="primary_question")
    if not plan.reader_ids:
        raise StudyError("tick at least one reader", field="readers")
    repeated = sorted(r for r, n in Counter(plan.reader_ids).items() if n > 1)
    if repeated:  # each would be assigned every case twice
        raise StudyError(f"reader id(s) {', '.join(map(str, repeated))} chosen more than once")
    if plan.readers_per_case is not None and not 1 <= plan.readers_per_case <= len(plan.reader_ids):
        raise StudyError(f"between 1 and {len(plan.reader_ids)}, the readers ticked",
                         field="readers_per_case")
    if not 0 <= plan.repeat_fraction <= 0.5:
        raise StudyError("the repeat fraction must be between 0 and 0.5", field="repeat_fraction")
    if adaptive and plan.repeat_fraction:
        raise StudyError("an adaptive study has no repeat reads: its cases arrive as it goes",
                         field="repeat_fraction")
    if adaptive and not 1 <= plan.batch_images <= min(100, plan.total or 0):
        raise StudyError("images per batch must be between 1 and 100, and at most the images "
                         "to draw in all", field="batch_images")
    if not 0 < plan.margin <= 0.5:
        raise StudyError(f"the equivalence margin must be above 0 and at most 0.5 (not {plan.margin:g})",
                         field="margin")
    if plan.targets and not plan.design.traits.compares_judge:
        raise StudyError(f"a {plan.design.label} study compares no judge: its targets are not used",
                         field=field_of(next(iter(plan.targets))))
    _check_known_share(plan)
    if plan.design.traits.shows_originals and not 0.1 <= plan.original_share <= 0.9:
        raise StudyError("the share of originals must be between 0.1 and 0.9",
                         field="original_share")


def _check_known_share(plan: StudyPlan) -> None:
    try:
        check_share(plan.known_share)
    except Invalid as error:
        raise StudyError(str(error), field=error.field) from error
    if not plan.known_share:
        return
    if not plan.design.rubric:
        raise StudyError(f"a {plan.design.label} study has no rubric answers to check against "
                         "a settled one: set the share of known-answer cases to 0",
                         field="known_share")
    if plan.design.draws_in_batches:
        raise StudyError("an adaptive study's cases arrive as it goes, so it mixes in no "
                         "known-answer cases: set their share to 0", field="known_share")


def plan_apart(session: Session, plan: StudyPlan) -> KeptApart:
    """What practice keeps out of this plan's draw: its readers' practices and the one it
    requires (app/studies/practice_apart.py)."""
    required = [plan.qualification.practice_id] if plan.qualification else []
    return kept_apart(session, plan.reader_ids, required)


def _with_known(session: Session, plan: StudyPlan, items: list[ItemRow],
                apart: KeptApart) -> tuple[list[ItemRow], dict[str, Any]]:
    """The items with the plan's known-answer cases added, and what the selection records."""
    if not plan.known_share:
        return items, {}
    count = planned_known(plan.known_share, len(items), len(plan.reader_ids),
                          plan.readers_per_case, plan.repeat_fraction)
    try:
        tasks = {i.task_id for i in items}
        drawn = draw_known(session, count, plan.seed, plan.reader_ids, tasks,
                           accepted_only=plan.design.accepted_only,
                           kinds=kinds_of(session, tasks), leave_out_images=apart.images)
    except Invalid as error:
        raise StudyError(str(error), field=error.field) from error
    return items + known_rows(session, drawn.answers), {"known_answers": {
        "share": plan.known_share, "cases": count, "seen_before": drawn.seen_before}}


def left_out_json(session: Session, plan: StudyPlan, apart: KeptApart) -> dict[str, Any]:
    """What the selection records of the units practice kept out of the draw."""
    left = practice_left_out(session, plan.case_filter, plan.design, apart)
    return {"practice_left_out": left} if left else {}


def draw_sample(session: Session, plan: StudyPlan, apart: KeptApart | None = None) -> tuple[
        dict[str, list[Candidate]], dict[str, int]]:
    """The sampled units per stratum, reproducible from the plan and the data, and the size
    of each stratum's pool (recorded: issue-level weights and the report's flow need it);
    none that practice keeps ``apart`` (by default, what it keeps from the plan's readers)."""
    validate_plan(plan)
    apart = plan_apart(session, plan) if apart is None else apart
    facets = plan.strata_facets
    wanted = {k: n for k, n in plan.per_stratum.items() if n > 0} if facets else {"": plan.total or 0}
    if plan.design.judged:
        return _draw_judged(session, plan, wanted, apart)
    pool = pool_by_stratum(admitted_candidates(session, plan.case_filter, plan.design, facets,
                                               apart), facets)
    sample = {}
    for key, count in wanted.items():
        found = pool.get(key, [])
        _enough(key, facets, len(found), count)
        rng = random.Random(f"{plan.seed}:sample:{key}")
        sample[key] = sorted(rng.sample(found, count), key=lambda c: (c.task_id, c.attempt_id or 0))
    return sample, {key: len(found) for key, found in pool.items()}


def _enough(key: str, facets: tuple[str, ...], size: int, count: int) -> None:
    if size < count:
        label = f"stratum {stratum_label(key, facets)}" if facets else "the filter"
        raise StudyError(f"{label} has {size} in its pool; {count} were asked")


def _draw_judged(session: Session, plan: StudyPlan, wanted: dict[str, int],
                 apart: KeptApart) -> tuple[dict[str, list[Candidate]], dict[str, int]]:
    """The same draw from the kept judged pool (app/studies/judged_pool.py): a stratum's
    members in attempt order, and ``random.sample`` of their positions picks what it picked
    from the list of candidates, so the sample is the one drawn before."""
    facets = plan.strata_facets
    pool = judged_pool(session)
    at = admitted(session, pool, plan.case_filter)
    at = at[apart.mask(pool.attempt_id[at], pool.image[at])]
    keys, inverse = stratum_keys(pool, at, facets)
    members = {key: at[inverse == k] for k, key in enumerate(keys)} if len(at) else {}
    sample = {}
    for key, count in wanted.items():
        found = members.get(key, np.zeros(0, dtype=np.int64))
        _enough(key, facets, len(found), count)
        chosen = [int(found[i]) for i in sample_positions(plan.seed, key, len(found), count)]
        sample[key] = sorted((Candidate(int(pool.task_id[i]), int(pool.attempt_id[i]),
                                        values_of(pool, i, facets), int(pool.image[i]))
                              for i in chosen), key=lambda c: (c.task_id, c.attempt_id or 0))
    return sample, {key: len(found) for key, found in sorted(members.items())}


def sample_positions(seed: int, key: str, size: int, count: int) -> list[int]:
    """The positions a stratum of ``size`` members (in attempt order) gives its ``count``
    cases: the same for the same seed and stratum, on any data of that size."""
    return random.Random(f"{seed}:sample:{key}").sample(range(size), count)


def create_study(*, session: Session, plan: StudyPlan, created_by: User) -> Study:
    """A study of edits (or runs) drawn from the pool its design samples; the web edge and the
    CLI reach it through its design (app/designs, ``design_of(plan.design).create``)."""
    if plan.design.pairs:  # its units are pairs, drawn by app/designs/pairwise
        raise StudyError("a pairwise study is made from its own form, which chooses the pairs",
                         field="design")
    if plan.design.draws_in_batches:  # its cases arrive as it goes (app/designs/adaptive)
        raise StudyError("an adaptive study is drawn by its design, a batch at a time",
                         field="design")
    apart = plan_apart(session, plan)
    sample, pool = draw_sample(session, plan, apart)
    check_people(session, plan)
    originals = (originals_shown(plan.original_share, plan.seed, sample)
                 if plan.design.traits.shows_originals else set())
    items = item_rows(session, sample, originals)
    check_planned_targets(plan, len(items))
    items, known = _with_known(session, plan, items, apart)
    selection = json.dumps(json.loads(selection_json(plan, pool)) | known
                           | left_out_json(session, plan, apart) | _weights_json(plan, sample, pool),
                           sort_keys=True)
    study = study_row(plan, created_by, selection)
    # Everything is read and drawn above; the write is the study row and a few bulk
    # inserts, so it holds SQLite's write lock for tens of milliseconds, not the whole creation.
    session.add(study)
    session.flush()
    write_items_and_worklists(session, study, items, plan.reader_ids)
    enrol_in_practice(session, plan)
    session.commit()
    session.refresh(study)
    return study


def _weights_json(plan: StudyPlan, sample: dict[str, list[Candidate]],
                  pool: dict[str, int]) -> dict[str, Any]:
    """What a study whose figures estimate its pool records: its cases are the sequence's
    units, each stratum's weighted to its share of the pool (app/studies/allocation.py)."""
    if not plan.design.traits.estimates_pool:
        return {}
    counts = {key: len(units) for key, units in sample.items()}
    return {"sequence_unit": CASE_UNIT, "weights": stratum_weights(pool, counts),
            "design_effect": round(design_effect(pool, counts), 4)}


def create_study_of(*, session: Session, plan: StudyPlan, sample: dict[str, list[Candidate]],
                    created_by: User, made_from: dict[str, Any],
                    with_items: Callable[[Session, Study], None] | None = None) -> Study:
    """A study of units chosen elsewhere (``sample``: stratum -> units), not drawn from a
    pool: a follow-up on the edits a regeneration made, say. ``made_from`` is recorded with
    the study's selection, so its report can say where its edits came from. ``with_items``
    writes what a design keeps beside its items, in the same transaction (a pairwise
    study's other edits): all of it is written, or none."""
    validate_plan(plan)
    check_people(session, plan)
    apart = plan_apart(session, plan)
    offered = sum(len(units) for units in sample.values())
    sample = {key: [c for c in units if apart.admits(c.attempt_id, c.task_id, c.source_image_id)]
              for key, units in sample.items()}
    left = offered - sum(len(units) for units in sample.values())
    items = item_rows(session, sample, set())
    if not items:
        raise StudyError("no edit to read: none of the units has an image, or practice keeps "
                         "every one apart (its readers met it, or its verdict, in a practice)")
    items, known = _with_known(session, plan, items, apart)
    selection = json.loads(selection_json(plan, {k: len(v) for k, v in sample.items()}))
    study = study_row(plan, created_by, json.dumps(
        selection | made_from | known | ({"practice_left_out": left} if left else {}),
        sort_keys=True))
    session.add(study)
    session.flush()
    write_items_and_worklists(session, study, items, plan.reader_ids)
    enrol_in_practice(session, plan)
    if with_items is not None:
        with_items(session, study)
    session.commit()
    session.refresh(study)
    return study


def _check_qualification(session: Session, plan: StudyPlan) -> None:
    asked = plan.qualification
    if asked is None:
        return
    try:
        check_requirement(session, asked.practice_id, asked.threshold, asked.min_cases, asked.on)
        practice = session.get(Study, asked.practice_id)
        assert practice is not None  # check_requirement found it
        check_enrolment(session, practice, plan.reader_ids)
    except Invalid as error:
        raise StudyError(str(error), field=error.field) from error


def enrol_in_practice(session: Session, plan: StudyPlan) -> None:
    """Every reader can practise: those not yet in the practice the study asks for are given
    its cases, in the transaction that writes the study."""
    if plan.qualification is not None:
        practice = session.get(Study, plan.qualification.practice_id)
        assert practice is not None  # checked by _check_qualification, with the enrolment
        enrol(session, practice, plan.reader_ids)


def check_people(session: Session, plan: StudyPlan) -> None:
    readers = [session.get(User, uid) for uid in plan.reader_ids]
    if any(r is None or r.role != Role.reader for r in readers):
        raise StudyError("every assigned account must exist and be a reader")
    if session.scalars(select(Study).where(col(Study.name) == plan.name)).first():
        raise StudyError(f"a study named {plan.name!r} exists already", field="name")
    _check_qualification(session, plan)


def study_row(plan: StudyPlan, created_by: User, selection: str) -> Study:
    assert created_by.id is not None
    # Every way a study is made prepares it: no reader opens it before its images are drawn
    # (app/studies/previews.py), whichever form, page or command made it.
    return Study(images_ready=False, name=plan.name, blinded=plan.blinded, reveal=plan.reveal.value,
                 design=plan.design.value, primary_question=plan.primary_question,
                 plan=json.dumps(plan.planned, sort_keys=True) if plan.planned else None,
                 margin=plan.margin,
                 targets=json.dumps(plan.targets, sort_keys=True) if plan.targets else None,
                 readers_per_case=plan.readers_per_case, repeat_fraction=plan.repeat_fraction,
                 seed=plan.seed, selection=selection, created_by=created_by.id,
                 order_secret=secrets.token_hex(16), show_instructions=plan.show_instructions,
                 instructions=checked_instructions(plan.instructions),
                 viewer_tools=tools_json(plan.viewer_tools,
                                         single_image=plan.design.single_image),
                 qualification=plan.qualification.as_json() if plan.qualification else None)


def check_planned_targets(plan: StudyPlan, cases: int) -> None:
    anticipated = plan.planned.get("agreement") if plan.planned else None
    try:
        check_targets(plan.targets, cases=cases, anticipated_agreement=anticipated)
    except Invalid as error:
        raise StudyError(str(error), field=error.field) from error


def selection_json(plan: StudyPlan, pool: dict[str, int]) -> str:
    selection: dict[str, Any] = {
        "filter": asdict(plan.case_filter), "design": plan.design.value,
        "strata_facets": list(plan.strata_facets), "per_stratum": plan.per_stratum,
        "pool": pool, "total": plan.total, "seed": plan.seed,
    }
    if plan.follow_up_of is not None:
        selection |= {"follow_up_of": plan.follow_up_of, "part": plan.part or {}}
    if plan.design.traits.shows_originals:
        selection["original_share"] = plan.original_share
    return json.dumps(selection, sort_keys=True)
