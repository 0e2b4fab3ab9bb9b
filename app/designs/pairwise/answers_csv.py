"""A pairwise study's answers and sample as CSV, streamed: every answer version (retractions
and history included) with the reader's reasons and comment, and the sample with both edits
of each pair, so that it can be rebuilt."""

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.studies.export import (
    CASE_HEADER,
    answer_versions,
    case_cells,
    iter_design_csv,
    sequences_of,
    stream_csv,
)
from app.studies.models import PairAnswer, Study, StudyItem, StudyPair

HEADER = (*CASE_HEADER, "pair_kind", "first_round", "second_round", "version",
          "retracted",
          # first | second (the pair's edits: the earlier round, or the accepted one, is the
          # first), equal, or neither (both unacceptable); and which edit the read showed left
          "choice", "shown_left", "confidence", "tags", "comment", "time_on_case_ms",
          "tool_use", "answered_at_utc")
PAIR_COLUMNS = ("pair_kind", "first_attempt_id", "first_round", "first_run_id",
                "second_attempt_id", "second_round", "second_run_id", "first_verdict_id")


def iter_pair_answers_csv(session: Session, study: Study) -> Iterator[str]:
    sequences = sequences_of(session, study)
    query = (answer_versions(PairAnswer, study, StudyPair)
             .join(StudyPair, col(StudyPair.item_id) == StudyItem.id))

    def row(found: Any) -> tuple[object, ...]:
        answer, assignment, reader, item, task, pair = found
        return (*case_cells(study, sequences, assignment, reader, item, task),
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
