"""One case with every run, round and verdict, in the order a reviewer reads them."""

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import NotFound
from app.models import Attempt, AttemptMetric, JudgeVerdict, Run, SourceImage, Task
from pipeline.vocabulary import Outcome


class CaseNotFound(NotFound):
    pass


@dataclass
class AttemptView:
    attempt: Attempt
    verdicts: list[JudgeVerdict]
    accepted: bool
    metric: AttemptMetric | None = None

    @property
    def verdict(self) -> JudgeVerdict | None:
        """The newest verdict; re-judging adds more, the first import adds one."""
        return self.verdicts[-1] if self.verdicts else None


@dataclass
class RunView:
    run: Run
    attempts: list[AttemptView] = field(default_factory=list)

    @property
    def accepted(self) -> AttemptView | None:
        return next((a for a in self.attempts if a.accepted), None)

    @property
    def failed(self) -> list[AttemptView]:
        return [a for a in self.attempts if not a.accepted]


@dataclass
class CaseView:
    task: Task
    source: SourceImage
    runs: list[Run]
    shown: RunView | None


def get_case(session: Session, task_id: int, run_id: int | None = None) -> CaseView:
    task = session.get(Task, task_id)
    if task is None:
        raise CaseNotFound(f"no case with id {task_id}")
    source = session.get(SourceImage, task.source_image_id)
    assert source is not None
    runs = list(session.scalars(select(Run).where(col(Run.task_id) == task_id).order_by(col(Run.id))))
    wanted = run_id if run_id is not None else task.latest_run_id
    run = next((r for r in runs if r.id == wanted), None)
    if run_id is not None and run is None:
        raise CaseNotFound(f"case {task_id} has no run {run_id}")
    return CaseView(task=task, source=source, runs=runs, shown=_run_view(session, run) if run else None)


def _run_view(session: Session, run: Run) -> RunView:
    attempts = list(session.scalars(
        select(Attempt).where(col(Attempt.run_id) == run.id).order_by(col(Attempt.round))))
    ids = [a.id for a in attempts]
    verdicts: dict[int, list[JudgeVerdict]] = {i: [] for i in ids if i is not None}
    if ids:
        query = (select(JudgeVerdict).where(col(JudgeVerdict.attempt_id).in_(ids))
                 .order_by(col(JudgeVerdict.id)))
        for verdict in session.scalars(query):
            verdicts[verdict.attempt_id].append(verdict)
    metrics = {m.attempt_id: m for m in session.scalars(
        select(AttemptMetric).where(col(AttemptMetric.attempt_id).in_(ids)))} if ids else {}
    last = len(attempts) - 1
    return RunView(run=run, attempts=[
        AttemptView(a, verdicts.get(a.id or 0, []), run.outcome == Outcome.success and i == last,
                    metrics.get(a.id or 0))
        for i, a in enumerate(attempts)
    ])
