"""A pairwise study's answers and sample as CSV, streamed: every answer version (retractions
and history included) with the reader's reasons and comment, and the sample with both edits
of each pair, so that it can be rebuilt."""

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Task, User
from app.studies.export import iter_design_csv, sequences_of, stream_csv
from app.studies.models import Assignment, PairAnswer, Study, StudyItem, StudyPair

HEADER = ("study", "reader", "sequence", "repeat_of_sequence", "item", "task_key", "modality",
          "disease", "direction", "pair_kind", "first_round", "second_round", "version",
          "retracted",
          # first | second (the pair's edits: the earlier round, or the accepted one, is the
          # first), equal, or neither (both unacceptable); and which edit the read showed left
          "choice", "shown_left", "confidence", "tags", "comment", "time_on_case_ms",
          "tool_use", "answered_at_utc")
PAIR_COLUMNS = ("pair_kind", "first_attempt_id", "first_round", "first_run_id",
                "second_attempt_id", "second_round", "second_run_id", "first_verdict_id")


def iter_pair_answers_csv(session: Session, study: Study) -> Iterator[str]:
    sequences = sequences_of(session, study)
    query = (select(PairAnswer, Assignment, col(User.name), col(StudyItem.uid), Task, StudyPair)
             .join(Assignment, col(Assignment.id) == PairAnswer.assignment_id)
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(StudyPair, col(StudyPair.item_id) == StudyItem.id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .where(col(Assignment.study_id) == study.id)
             .order_by(col(User.name), col(Assignment.sequence), col(PairAnswer.version)))

    def row(found: Any) -> tuple[object, ...]:
        answer, assignment, reader, uid, task, pair = found
        return (study.name, reader, assignment.sequence,
                sequences.get(assignment.repeat_of, "") if assignment.repeat_of else "",
                uid, task.task_key, task.modality, task.disease, task.direction,
                pair.kind, pair.first_round, pair.second_round, answer.version,
                answer.retracted, answer.choice, "first" if answer.first_left else "second",
                answer.confidence, answer.tags, answer.comment, answer.time_on_case_ms,
                answer.tool_use or "", answer.created_at.strftime("%Y-%m-%d %H:%M:%S"))

    return stream_csv(session, HEADER, query, row)


def iter_pair_design_csv(session: Session, study: Study) -> Iterator[str]:
    """The sample as every design gives it, with each pair's other edit beside the item's."""
    pairs = {pair.item_id: pair for pair in session.scalars(
        select(StudyPair).join(StudyItem, col(StudyItem.id) == StudyPair.item_id)
        .where(col(StudyItem.study_id) == study.id))}
    attempts = {item_id: attempt for item_id, attempt in session.execute(
        select(col(StudyItem.id), col(StudyItem.attempt_id)).where(
            col(StudyItem.study_id) == study.id))}

    def columns(item_id: int) -> tuple[object, ...]:
        pair = pairs[item_id]
        return (pair.kind, pair.first_attempt_id, pair.first_round, pair.first_run_id,
                attempts[item_id], pair.second_round, pair.second_run_id,
                pair.first_verdict_id or "")

    return iter_design_csv(session, study, PAIR_COLUMNS, columns)
