"""The pairs a pairwise study can read. Both edits of a pair are of one task, so of one source
image, and both images are present:

- consecutive: round k against round k + 1 of one run, where the refinement loop should have
  made the edit better;
- accepted: a run's accepted edit against each of its rejected rounds, where the judge chose;
- runs: the final edits of one task's runs, each against the next (before and after a
  regeneration, or two edit models).

Each pair is stratified by modality, direction and the judge's verdicts of record on its two
edits: both passed, one passed, or neither (an edit never judged counts as not passed).
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, where_clauses
from app.models import Attempt, JudgeVerdict, Run, Task

FACETS = ("modality", "direction", "verdicts")


class PairKind(StrEnum):
    consecutive = "consecutive"
    accepted = "accepted"
    runs = "runs"


@dataclass(frozen=True)
class Edit:
    attempt_id: int
    run_id: int
    round: int
    passed: bool  # the judge's verdict of record; False when never judged or unreadable


@dataclass(frozen=True)
class Pair:
    """Two edits of one task: ``first`` is the earlier round, the accepted edit, or the
    earlier run's; ``second`` the other. Which is shown left is drawn per read, never this."""

    kind: PairKind
    task_id: int
    source_image_id: int
    first: Edit
    second: Edit
    modality: str
    direction: str

    @property
    def verdicts(self) -> str:
        passed = self.first.passed + self.second.passed
        return {2: "both passed", 1: "one passed", 0: "neither passed"}[passed]

    def value(self, facet: str) -> str:
        return {"modality": self.modality, "direction": self.direction,
                "verdicts": self.verdicts}[facet]


def pairs(session: Session, kind: PairKind, case_filter: CaseFilter = CaseFilter()) -> list[Pair]:
    """Every pair of this kind among the tasks the filter admits, in task order."""
    tasks, runs = _edits(session, case_filter)
    found: list[Pair] = []
    for task_id in sorted(runs):
        task = tasks[task_id]
        ordered = runs[task_id]  # run id -> its edits by round, runs in the order they were made
        for edits, accepted in ordered.values():
            if kind is PairKind.consecutive:
                found.extend(task.pair(kind, a, b) for a, b in pairwise(edits)
                             if b.round == a.round + 1)
            elif kind is PairKind.accepted and accepted is not None:
                found.extend(task.pair(kind, accepted, other) for other in edits
                             if other.attempt_id != accepted.attempt_id)
        if kind is PairKind.runs:
            finals = [accepted or edits[-1] for edits, accepted in ordered.values() if edits]
            found.extend(task.pair(kind, a, b) for a, b in pairwise(finals))
    return found


@dataclass(frozen=True)
class _Task:
    task_id: int
    source_image_id: int
    modality: str
    direction: str

    def pair(self, kind: PairKind, first: Edit, second: Edit) -> Pair:
        return Pair(kind, self.task_id, self.source_image_id, first, second, self.modality,
                    self.direction)


def _edits(session: Session, case_filter: CaseFilter) -> tuple[
        dict[int, _Task], dict[int, dict[int, tuple[list[Edit], Edit | None]]]]:
    """The filtered tasks, and each one's runs (in the order they were made) with their
    present edits by round and the accepted one."""
    first_verdict = (select(func.min(JudgeVerdict.id)).where(col(JudgeVerdict.attempt_id) == Attempt.id)
                     .correlate(Attempt).scalar_subquery())
    query = (select(col(Task.id), col(Task.source_image_id), col(Task.modality), col(Task.direction),
                    col(Run.id), col(Run.success_round), col(Attempt.id), col(Attempt.round),
                    col(JudgeVerdict.qualified))
             .select_from(Task).join(Run, col(Run.task_id) == Task.id)
             .join(Attempt, col(Attempt.run_id) == Run.id)
             .outerjoin(JudgeVerdict, col(JudgeVerdict.id) == first_verdict)
             .where(col(Attempt.image_present).is_(True),
                    *where_clauses(case_filter, session.get_bind().dialect.name))
             .order_by(col(Task.id), col(Run.created_at), col(Run.id), col(Attempt.round)))
    tasks: dict[int, _Task] = {}
    runs: dict[int, dict[int, tuple[list[Edit], Edit | None]]] = defaultdict(dict)
    for task_id, image, modality, direction, run_id, success, attempt_id, round_, passed in \
            session.execute(query):
        tasks.setdefault(task_id, _Task(task_id, image, modality, direction))
        edits, accepted = runs[task_id].get(run_id, ([], None))
        edit = Edit(attempt_id, run_id, round_, bool(passed))
        edits.append(edit)
        runs[task_id][run_id] = (edits, edit if success == round_ else accepted)
    return tasks, runs


def strata(found: Iterable[Pair], facets: tuple[str, ...] = FACETS) -> dict[str, list[Pair]]:
    """The pairs by stratum key ("chest_xray/add/one passed")."""
    by: dict[str, list[Pair]] = defaultdict(list)
    for pair in found:
        by["/".join(pair.value(f) for f in facets)].append(pair)
    return dict(by)
