"""Creating a study: which cases, stratified and seeded, and who reads them in which order.

Everything random is drawn from ``random.Random`` seeded with the study seed and a label,
so the same plan on the same data always gives the same sample and the same orders.
"""

import json
import random
import secrets
from dataclasses import asdict, dataclass, field

from sqlalchemy import select
from sqlmodel import Session, col

from app.case_filter import CaseFilter, where_clauses
from app.models import Attempt, Role, Task, User
from app.study_models import Assignment, Reveal, Study, StudyItem, StudyReader

STRATA_FACETS = ("direction", "modality", "disease", "outcome")
MAX_CASES = 20_000


class StudyError(ValueError):
    """A plan that cannot be carried out; the message says what to change."""


@dataclass
class StudyPlan:
    name: str
    case_filter: CaseFilter
    reader_ids: list[int]
    seed: int = 42
    # Facet to stratify on and the cases wanted per value; without it, ``total`` cases.
    strata_facet: str | None = None
    per_stratum: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    include_failed_rounds: bool = False
    readers_per_case: int | None = None
    repeat_fraction: float = 0.0
    blinded: bool = True
    reveal: Reveal = Reveal.never


def _validate(plan: StudyPlan) -> None:
    if not plan.name.strip() or len(plan.name) > 200:
        raise StudyError("give the study a name of at most 200 characters")
    if plan.strata_facet is not None and plan.strata_facet not in STRATA_FACETS:
        raise StudyError(f"strata can be one of {', '.join(STRATA_FACETS)}")
    wanted = sum(plan.per_stratum.values()) if plan.strata_facet else (plan.total or 0)
    if not 0 < wanted <= MAX_CASES or any(n <= 0 for n in plan.per_stratum.values()):
        raise StudyError(f"ask for between 1 and {MAX_CASES} cases, each stratum at least 1")
    if not plan.reader_ids:
        raise StudyError("assign at least one reader")
    if plan.readers_per_case is not None and not 1 <= plan.readers_per_case <= len(plan.reader_ids):
        raise StudyError(f"readers per case must be between 1 and {len(plan.reader_ids)}")
    if not 0 <= plan.repeat_fraction <= 0.5:
        raise StudyError("the repeat fraction must be between 0 and 0.5")


def _pool(session: Session, plan: StudyPlan) -> dict[str, list[int]]:
    """Task ids that have something to read, by stratum value ('' without strata)."""
    dialect = session.get_bind().dialect.name
    stratum = getattr(Task, plan.strata_facet) if plan.strata_facet else None
    query = select(col(Task.id), stratum if stratum is not None else col(Task.id))
    query = query.where(*where_clauses(plan.case_filter, dialect)).order_by(col(Task.id))
    if not plan.include_failed_rounds:
        query = query.where(col(Task.accepted_attempt_id).is_not(None))
    else:
        query = query.where(col(Task.thumb_attempt_id).is_not(None))
    pool: dict[str, list[int]] = {}
    for task_id, value in session.execute(query):
        pool.setdefault(str(value) if plan.strata_facet else "", []).append(task_id)
    return pool


def draw_sample(session: Session, plan: StudyPlan) -> dict[str, list[int]]:
    """The sampled task ids per stratum, reproducible from the plan and the data."""
    _validate(plan)
    pool = _pool(session, plan)
    wanted = plan.per_stratum if plan.strata_facet else {"": plan.total or 0}
    sample = {}
    for value, count in wanted.items():
        candidates = pool.get(value, [])
        if len(candidates) < count:
            label = f"stratum {plan.strata_facet}={value}" if plan.strata_facet else "the filter"
            raise StudyError(f"{label} has {len(candidates)} readable cases; {count} were asked")
        rng = random.Random(f"{plan.seed}:sample:{value}")
        sample[value] = sorted(rng.sample(candidates, count))
    return sample


def create_study(*, session: Session, plan: StudyPlan, created_by: User) -> Study:
    sample = draw_sample(session, plan)
    readers = [session.get(User, uid) for uid in plan.reader_ids]
    if any(r is None or r.role != Role.reader for r in readers):
        raise StudyError("every assigned account must exist and be a reader")
    if session.scalars(select(Study).where(col(Study.name) == plan.name)).first():
        raise StudyError(f"a study named {plan.name!r} exists already")
    assert created_by.id is not None
    study = Study(name=plan.name, blinded=plan.blinded, reveal=plan.reveal.value,
                  include_failed_rounds=plan.include_failed_rounds,
                  readers_per_case=plan.readers_per_case, repeat_fraction=plan.repeat_fraction,
                  seed=plan.seed, selection=_selection_json(plan), created_by=created_by.id)
    session.add(study)
    session.flush()
    items = _add_items(session, study, sample)
    _assign(session, study, items, plan.reader_ids)
    session.commit()
    session.refresh(study)
    return study


def _selection_json(plan: StudyPlan) -> str:
    return json.dumps({
        "filter": asdict(plan.case_filter), "strata_facet": plan.strata_facet,
        "per_stratum": plan.per_stratum, "total": plan.total, "seed": plan.seed,
    }, sort_keys=True)


def _add_items(session: Session, study: Study, sample: dict[str, list[int]]) -> list[StudyItem]:
    assert study.id is not None
    items = []
    for stratum, task_ids in sample.items():
        for task_id in task_ids:
            task = session.get(Task, task_id)
            assert task is not None and task.latest_run_id is not None
            for attempt_id in _attempts_to_read(session, task, study.include_failed_rounds):
                item = StudyItem(study_id=study.id, task_id=task_id, attempt_id=attempt_id,
                                 stratum=stratum, uid=secrets.token_hex(12))
                session.add(item)
                items.append(item)
    session.flush()
    return items


def _attempts_to_read(session: Session, task: Task, include_failed: bool) -> list[int]:
    if not include_failed:
        return [task.accepted_attempt_id] if task.accepted_attempt_id else []
    query = (select(col(Attempt.id)).where(col(Attempt.run_id) == task.latest_run_id,
                                           col(Attempt.image_present).is_(True))
             .order_by(col(Attempt.round)))
    return list(session.scalars(query))


def _assign(session: Session, study: Study, items: list[StudyItem], reader_ids: list[int]) -> None:
    assert study.id is not None
    canonical = sorted(items, key=lambda i: i.id or 0)
    random.Random(f"{study.seed}:overlap").shuffle(canonical)
    per_reader: dict[int, list[StudyItem]] = {uid: [] for uid in reader_ids}
    k = study.readers_per_case or len(reader_ids)
    for index, item in enumerate(canonical):
        for j in range(k):  # round-robin keeps every reader's load within one case
            per_reader[reader_ids[(index * k + j) % len(reader_ids)]].append(item)
    for user_id, own in per_reader.items():
        order_seed = random.Random(f"{study.seed}:reader:{user_id}").randrange(2**31)
        session.add(StudyReader(study_id=study.id, user_id=user_id, order_seed=order_seed))
        _add_worklist(session, study, user_id, own, order_seed)


def _add_worklist(session: Session, study: Study, user_id: int, own: list[StudyItem],
                  order_seed: int) -> None:
    assert study.id is not None
    order = sorted(own, key=lambda i: i.id or 0)
    random.Random(order_seed).shuffle(order)
    first_reads = []
    for sequence, item in enumerate(order, start=1):
        assignment = Assignment(study_id=study.id, user_id=user_id, item_id=item.id or 0,
                                sequence=sequence)
        session.add(assignment)
        first_reads.append(assignment)
    session.flush()
    repeats = round(len(first_reads) * study.repeat_fraction)
    if repeats:
        # Shown again after every first read, in a fresh order, and marked nowhere on screen.
        chosen = random.Random(f"{order_seed}:repeat").sample(first_reads, repeats)
        for offset, original in enumerate(chosen, start=1):
            session.add(Assignment(study_id=study.id, user_id=user_id, item_id=original.item_id,
                                   sequence=len(first_reads) + offset, repeat_of=original.id))
