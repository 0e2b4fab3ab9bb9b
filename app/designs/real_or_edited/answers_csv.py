"""A real-or-edited study's answers as CSV, streamed: every answer version (retractions
and history included), with the truth each image was (``shows``: original or edit)."""

from collections.abc import Iterator
from typing import Any

from sqlmodel import Session

from app.studies.export import (
    CASE_HEADER,
    answer_versions,
    case_cells,
    figure_cell,
    sequences_of,
    stream_csv,
)
from app.studies.models import RealOrEditedAnswer, Study

REAL_OR_EDITED_HEADER = (*CASE_HEADER, "shows", "version", "retracted",
                         "edited", "confidence", "click_x", "click_y", "time_on_case_ms",
                         "answered_at_utc")


def iter_real_or_edited_answers_csv(session: Session, study: Study) -> Iterator[str]:
    """Every answer version of a real-or-edited study (its first reads in long format are
    real-or-edited.csv), with the truth each image was (``shows``: original or edit)."""
    sequences = sequences_of(session, study)
    query = answer_versions(RealOrEditedAnswer, study)

    def row(found: Any) -> tuple[object, ...]:
        answer, assignment, reader, item, task = found
        return (*case_cells(study, sequences, assignment, reader, item, task),
                item.shows, answer.version, answer.retracted, answer.edited,
                answer.confidence, figure_cell(answer.click_x), figure_cell(answer.click_y),
                answer.time_on_case_ms, answer.created_at.strftime("%Y-%m-%d %H:%M:%S"))

    return stream_csv(session, REAL_OR_EDITED_HEADER, query, row)
