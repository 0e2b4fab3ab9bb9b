"""A real-or-edited study's answers as CSV, streamed: every answer version (retractions
and history included), with the truth each image was (``shows``: original or edit)."""

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Task, User
from app.studies.export import figure_cell, sequences_of, stream_csv
from app.studies.models import Assignment, RealOrEditedAnswer, Study, StudyItem

REAL_OR_EDITED_HEADER = ("study", "reader", "sequence", "repeat_of_sequence", "item", "task_key",
                         "modality", "disease", "direction", "shows", "version", "retracted",
                         "edited", "confidence", "click_x", "click_y", "time_on_case_ms",
                         "answered_at_utc")


def iter_real_or_edited_answers_csv(session: Session, study: Study) -> Iterator[str]:
    """Every answer version of a real-or-edited study (its first reads in long format are
    real-or-edited.csv), with the truth each image was (``shows``: original or edit)."""
    sequences = sequences_of(session, study)
    query = (select(RealOrEditedAnswer, Assignment, col(User.name), StudyItem, Task)
             .join(Assignment, col(Assignment.id) == RealOrEditedAnswer.assignment_id)
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .where(col(Assignment.study_id) == study.id)
             .order_by(col(User.name), col(Assignment.sequence), col(RealOrEditedAnswer.version)))

    def row(found: Any) -> tuple[object, ...]:
        answer, assignment, reader, item, task = found
        return (study.name, reader, assignment.sequence,
                sequences.get(assignment.repeat_of, "") if assignment.repeat_of else "",
                item.uid, task.task_key, task.modality, task.disease, task.direction,
                item.shows, answer.version, answer.retracted, answer.edited,
                answer.confidence, figure_cell(answer.click_x), figure_cell(answer.click_y),
                answer.time_on_case_ms, answer.created_at.strftime("%Y-%m-%d %H:%M:%S"))

    return stream_csv(session, REAL_OR_EDITED_HEADER, query, row)
