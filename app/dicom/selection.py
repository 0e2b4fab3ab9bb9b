"""Which edits a DICOM export or send holds: a study's (the edits its readers read), every
round of the latest runs of one modality's tasks, or of the tasks named."""

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import Invalid, NotFound
from app.models import Attempt, Task
from app.studies.models import Study, StudyItem, StudyPair


@dataclass(frozen=True)
class DicomSelection:
    study_id: int | None = None
    modality: str | None = None
    task_ids: tuple[int, ...] = field(default_factory=tuple)

    def describe(self) -> dict[str, object]:
        return {k: v for k, v in (("study", self.study_id), ("modality", self.modality),
                                  ("tasks", list(self.task_ids))) if v}


def chosen_edits(session: Session, chosen: DicomSelection) -> dict[int, list[int]]:
    """task id -> its chosen edits' attempt ids, in round order. Exactly one way of choosing
    is given (Invalid otherwise; tasks may narrow a study); NotFound names a study or tasks
    that do not exist."""
    ways = sum(bool(w) for w in (chosen.study_id, chosen.modality, chosen.task_ids))
    if ways != 1 and not (ways == 2 and chosen.study_id and chosen.task_ids):
        raise Invalid("choose the edits one way: a study, a modality, or tasks")
    if chosen.study_id is not None:
        of_study = _study_edits(session, chosen.study_id)
        return {t: ids for t, ids in of_study.items() if not chosen.task_ids or t in chosen.task_ids}
    if chosen.task_ids:
        known = set(session.scalars(select(col(Task.id)).where(col(Task.id).in_(chosen.task_ids))))
        missing = sorted(set(chosen.task_ids) - known)
        if missing:
            raise NotFound(f"no task {', '.join(map(str, missing[:10]))}")
        where: Any = col(Task.id).in_(chosen.task_ids)
    else:
        where = col(Task.modality) == chosen.modality
    rows = session.execute(
        select(col(Task.id), col(Attempt.id)).join(Attempt, col(Attempt.run_id) == Task.latest_run_id)
        .where(where, col(Attempt.image_present).is_(True))
        .order_by(col(Task.id), col(Attempt.round)))
    # Tasks named one by one keep their original even when no round made an image.
    edits: dict[int, list[int]] = {int(t): [] for t in chosen.task_ids}
    for task_id, attempt_id in rows:
        edits.setdefault(int(task_id), []).append(int(attempt_id))
    return edits


def _study_edits(session: Session, study_id: int) -> dict[int, list[int]]:
    if session.get(Study, study_id) is None:
        raise NotFound(f"no study {study_id}")
    rows = session.execute(
        select(col(StudyItem.task_id), col(StudyItem.attempt_id), col(StudyPair.first_attempt_id))
        .outerjoin(StudyPair, col(StudyPair.item_id) == StudyItem.id)
        .where(col(StudyItem.study_id) == study_id).order_by(col(StudyItem.task_id)))
    edits: dict[int, set[int]] = {}
    for task_id, attempt_id, first in rows:
        chosen = edits.setdefault(int(task_id), set())
        chosen.update(a for a in (attempt_id, first) if a is not None)
    rounds = {int(a): int(r) for a, r in session.execute(select(col(Attempt.id), col(Attempt.round))
              .where(col(Attempt.id).in_({a for ids in edits.values() for a in ids})))}
    return {task: sorted(ids, key=lambda a: rounds.get(a, 0)) for task, ids in edits.items()}
