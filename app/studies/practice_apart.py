"""Practice kept apart from the studies that count.

A practice shows, after each answer, the edit's settled answer, the other readers' answers and
the judge's verdict with its reasons (app/studies/practice.py). A reader who met an edit there
would know its answer when it came back, so:

- an edit shown in a practice, and any edit of the same source image, never reaches a reader
  of that practice again, in any study, as an ordinary case or as a known-answer case;
- an edit whose judge's verdict a practice showed never enters any study's ordinary sample
  (whoever reads it, the judge's side of the comparison is no longer blind to the readers who
  practised on it, and a reader told the verdict would be compared with it);
- a reader is never put into a practice whose images wait unread in a study of theirs.

The draw leaves these out and counts them; the form and the study's selection say how many.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import Invalid
from app.models import Attempt, Run, Task
from app.studies.models import Answer, Assignment, Study, StudyItem, StudyReader


@dataclass(frozen=True)
class KeptApart:
    """What a study's draw must leave out because of practice."""

    images: frozenset[int]  # source images a reader of the study met in a practice
    attempts: frozenset[int]  # edits whose judge's verdict any practice showed
    tasks: frozenset[int]  # their tasks: a unit of a task's rounds shows every round

    @classmethod
    def nothing(cls) -> "KeptApart":
        return cls(frozenset(), frozenset(), frozenset())

    def admits(self, attempt_id: int | None, task_id: int, image: int) -> bool:
        """An ordinary unit: its edit (or, for a unit of rounds, its task) and image clear."""
        if image in self.images:
            return False
        return task_id not in self.tasks if attempt_id is None else attempt_id not in self.attempts

    def mask(self, attempt_ids: np.ndarray, images: np.ndarray) -> np.ndarray:
        """Which of these edits an ordinary sample may hold."""
        out = ~np.isin(attempt_ids, np.fromiter(self.attempts, dtype=np.int64, count=len(self.attempts)))
        return out & ~np.isin(images, np.fromiter(self.images, dtype=np.int64, count=len(self.images)))


def practice_ids_of(session: Session, reader_ids: Iterable[int]) -> set[int]:
    """The practice studies any of these readers is in."""
    readers = sorted(set(reader_ids))
    if not readers:
        return set()
    return {int(s) for s in session.scalars(
        select(col(StudyReader.study_id)).join(Study, col(Study.id) == StudyReader.study_id)
        .where(col(Study.practice).is_(True), col(StudyReader.user_id).in_(readers)))}


def _shown(session: Session, practice_ids: set[int] | None) -> list[tuple[int, int, int]]:
    """(attempt, task, source image) of every edit the practices show (all, when None)."""
    query = (select(col(StudyItem.attempt_id), col(Task.id), col(Task.source_image_id))
             .join(Study, col(Study.id) == StudyItem.study_id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .join(Run, col(Run.id) == Attempt.run_id)
             .join(Task, col(Task.id) == Run.task_id)
             .where(col(Study.practice).is_(True)))
    if practice_ids is not None:
        if not practice_ids:
            return []
        query = query.where(col(StudyItem.study_id).in_(sorted(practice_ids)))
    return [(int(a), int(t), int(i)) for a, t, i in session.execute(query.distinct())]


def kept_apart(session: Session, reader_ids: Iterable[int], also: Iterable[int] = ()) -> KeptApart:
    """What a study read by ``reader_ids`` leaves out. ``also``: practice studies its readers
    are about to be put in (the one it requires), counted as if they were in them already."""
    shown = _shown(session, None)
    met = practice_ids_of(session, reader_ids) | set(also)
    images = {image for _, _, image in _shown(session, met)} if met else set()
    return KeptApart(frozenset(images), frozenset(a for a, _, _ in shown),
                     frozenset(t for _, t, _ in shown))


def unread_images(session: Session, reader_ids: Iterable[int]) -> dict[int, set[int]]:
    """Reader -> the source images waiting unread in their studies (practice aside)."""
    readers = sorted(set(reader_ids))
    if not readers:
        return {}
    answered = select(col(Answer.assignment_id))
    rows = session.execute(
        select(col(Assignment.user_id), col(Task.source_image_id))
        .join(Study, col(Study.id) == Assignment.study_id)
        .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
        .join(Task, col(Task.id) == StudyItem.task_id)
        .where(col(Assignment.user_id).in_(readers), col(Study.practice).is_(False),
               col(Study.locked_at).is_(None), col(Assignment.id).not_in(answered))
        .distinct())
    found: dict[int, set[int]] = {}
    for user, image in rows:
        found.setdefault(int(user), set()).add(int(image))
    return found


def check_enrolment(session: Session, practice: Study, reader_ids: Iterable[int]) -> None:
    """Invalid when a reader would meet in this practice an image still unread in a study of
    theirs: the practice would tell them its answer."""
    images = {image for _, _, image in _shown(session, {practice.id or 0})}
    waiting = unread_images(session, reader_ids)
    clash = sorted(user for user, unread in waiting.items() if unread & images)
    if clash:
        raise Invalid(f"reader id(s) {', '.join(map(str, clash))} have images of practice "
                      f"{practice.name!r} still unread in a study of theirs: the practice would "
                      "show them the answers. Let them finish that study first, or choose "
                      "another practice", field="qualify_practice")
