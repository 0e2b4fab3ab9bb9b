"""The instruction a blinded reader sees: the task's own intent, the same for every round.

A refinement round's instruction is the first one with correction sentences added in answer
to the judge's verdicts ("make the finding more conspicuous", "the previous edit returned no
image"), so its text told round 1 from later rounds every time, and the longest instruction
of a task picked its accepted edit. Readers therefore see the run's first instruction, with
any sentence that speaks of an earlier round or verdict taken out; when nothing is left (a
first instruction that is itself a rewrite), a plain statement of the task.
"""

import re

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
