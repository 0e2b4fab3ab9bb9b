"""What the exports read per chunk of tasks: the rounds of each task's latest run with their
verdict of record (the first stored, the one the pipeline acted on)."""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.models import Attempt, JudgeVerdict, Task
from pipeline.vocabulary import DIMENSIONS, QUESTIONS

Answers = dict[str, bool | None]


@dataclass(frozen=True)
class Round:
    attempt_id: int
    run_id: int
    round: int
    instruction: str
    judge: Answers  # empty when no readable verdict


def answer_columns(found: Answers) -> dict[str, bool | None] | None:
    """Answers as an export's column: every question, null where unanswered; null when
    there are none at all (no verdict, or no reader read the edit)."""
    return {q: found.get(q) for q in QUESTIONS} if found else None


def judge_answers(verdict: JudgeVerdict | None) -> Answers:
    if verdict is None or verdict.error is not None:
        return {}
    return {"overall": verdict.qualified} | {d: getattr(verdict, d) for d in DIMENSIONS}


def rounds_of(session: Session, tasks: list[Task]) -> dict[int, list[Round]]:
    """run id -> its rounds with an image, in round order."""
    runs = [t.latest_run_id for t in tasks if t.latest_run_id is not None]
    if not runs:
        return {}
    first = (select(col(JudgeVerdict.attempt_id), func.min(JudgeVerdict.id).label("verdict_id"))
             .join(Attempt, col(Attempt.id) == JudgeVerdict.attempt_id)
             .where(col(Attempt.run_id).in_(runs)).group_by(col(JudgeVerdict.attempt_id)).subquery())
    query = (select(Attempt, JudgeVerdict)
             .outerjoin(first, first.c.attempt_id == Attempt.id)
             .outerjoin(JudgeVerdict, col(JudgeVerdict.id) == first.c.verdict_id)
             .where(col(Attempt.run_id).in_(runs), col(Attempt.image_present).is_(True))
             .order_by(col(Attempt.run_id), col(Attempt.round)))
    found: dict[int, list[Round]] = {}
    for attempt, verdict in session.execute(query):
        found.setdefault(attempt.run_id, []).append(Round(
            attempt.id or 0, attempt.run_id, attempt.round, attempt.instruction or "",
            judge_answers(verdict)))
    return found


def task_chunks(session: Session, where: list[Any], size: int = 500) -> Iterator[list[Task]]:
    """Tasks in id order, a chunk at a time (keyset: each query starts after the last id)."""
    last = 0
    while True:
        chunk = list(session.scalars(select(Task).where(col(Task.id) > last, *where)
                                     .order_by(col(Task.id)).limit(size)))
        if not chunk:
            return
        yield chunk
        last = chunk[-1].id or 0
        session.expunge_all()  # a chunk's objects go once written: memory stays flat
