"""The instruction a blinded reader sees: the task's own intent, the same for every round.

A refinement round's instruction is the first one with correction sentences added in answer
to the judge's verdicts ("make the finding more conspicuous", "the previous edit returned no
image"), so its text told round 1 from later rounds every time, and the longest instruction
of a task picked its accepted edit. Readers therefore see the run's first instruction, with
any sentence that speaks of an earlier round or verdict taken out; when nothing is left (a
first instruction that is itself a rewrite), a plain statement of the task.
"""

import re
from collections.abc import Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Attempt, Task

# Sentences that refer to the history: earlier rounds, attempts, edits, verdicts, the judge.
_HISTORY = re.compile(
    r"\b(previous|prior|earlier|last|former|preceding)\s+(round|attempt|edit|image|try|"
    r"version|instruction|verdict|output|result)s?\b"
    r"|\b(judge|verdict|evaluat\w*|reviewer|rejected|rejection|failed|feedback)\b"
    r"|\bround\s*\d+|\battempt\s*\d+|\b(again|retry|this time|once more)\b",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def plain_task(modality: str, disease: str, direction: str) -> str:
    finding = disease.replace("_", " ").lower()
    image = modality.replace("_", " ")
    if direction == "add":
        return f"Add signs of {finding} to this {image} image, changing nothing else."
    return f"Remove every sign of {finding} from this {image} image, changing nothing else."


def without_history(text: str) -> str:
    """The sentences of an instruction that do not speak of earlier rounds or verdicts."""
    kept = [s for s in _SENTENCE_END.split(text.strip()) if s and not _HISTORY.search(s)]
    return " ".join(kept).strip()


def reader_instruction(session: Session, task: Task, attempt: Attempt) -> str:
    """The run's first instruction without history, else the task stated plainly."""
    first = session.scalars(select(col(Attempt.instruction)).where(
        col(Attempt.run_id) == attempt.run_id).order_by(col(Attempt.round)).limit(1)).first()
    text = without_history(first or "")
    return text or plain_task(task.modality, task.disease, task.direction)


def reader_instructions(session: Session, pairs: Sequence[tuple[int, int]]) -> dict[int, str]:
    """``reader_instruction`` for many (task id, attempt id) pairs at once, by attempt id: three
    queries per 5,000 pairs instead of three per pair (a 1,000-case study spent most of its
    creation on them)."""
    found: dict[int, str] = {}
    for start in range(0, len(pairs), 5000):
        chunk = pairs[start:start + 5000]
        run_of = dict(session.execute(select(col(Attempt.id), col(Attempt.run_id)).where(
            col(Attempt.id).in_([a for _, a in chunk]))).all())
        first: dict[int, tuple[int, str | None]] = {}
        for run_id, round_, text in session.execute(
                select(col(Attempt.run_id), col(Attempt.round), col(Attempt.instruction))
                .where(col(Attempt.run_id).in_(set(run_of.values())))):
            if run_id not in first or round_ < first[run_id][0]:
                first[run_id] = (round_, text)
        tasks = {t: (m, d, dr) for t, m, d, dr in session.execute(
            select(col(Task.id), col(Task.modality), col(Task.disease), col(Task.direction))
            .where(col(Task.id).in_({t for t, _ in chunk})))}
        for task_id, attempt_id in chunk:
            text = without_history(first.get(run_of[attempt_id], (0, ""))[1] or "")
            found[attempt_id] = text or plain_task(*tasks[task_id])
    return found
