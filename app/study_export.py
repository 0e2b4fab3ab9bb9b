"""Every answer version of a study as CSV rows, streamed: history included, nothing paged."""

import csv
import io
from collections.abc import Iterator

from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Attempt, Task, User
from app.study_models import Answer, Assignment, Study, StudyItem

HEADER = ("study", "reader", "sequence", "repeat_of_sequence", "item", "task_key", "modality",
          "disease", "direction", "round", "version", "retracted", "compliance", "structure",
          "realism", "fidelity", "overall", "confidence", "tags", "comment", "time_on_case_ms",
          "answered_at_utc")
# Rows fetched from the database per round trip while streaming.
CHUNK = 500


def iter_answer_csv(session: Session, study: Study) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(HEADER)
    yield flush()
    sequences: dict[int, int] = {
        row[0]: row[1] for row in session.execute(
            select(col(Assignment.id), col(Assignment.sequence))
            .where(col(Assignment.study_id) == study.id))}
    query = (select(Answer, Assignment, col(User.name), col(StudyItem.uid), Task, col(Attempt.round))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .where(col(Assignment.study_id) == study.id)
             .order_by(col(User.name), col(Assignment.sequence), col(Answer.version))
             .execution_options(yield_per=CHUNK))
    for answer, assignment, reader, uid, task, round_ in session.execute(query):
        writer.writerow((study.name, reader, assignment.sequence,
                         sequences.get(assignment.repeat_of, "") if assignment.repeat_of else "",
                         uid, task.task_key, task.modality, task.disease, task.direction, round_,
                         answer.version, answer.retracted, answer.compliance, answer.structure,
                         answer.realism, answer.fidelity, answer.overall, answer.confidence,
                         answer.tags, answer.comment, answer.time_on_case_ms,
                         answer.created_at.strftime("%Y-%m-%d %H:%M:%S")))
        yield flush()
