"""A study as CSV, streamed: every answer version (history included, nothing paged), and the
design (the sample, and each reader's seeded order) so that the study can be audited."""

from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.csv_cells import CsvRows
from app.models import Attempt, Task, User
from app.studies.models import (
    Answer,
    Assignment,
    RoiMetric,
    Study,
    StudyItem,
    StudyReader,
    in_figures,
)
from app.studies.reader_models import KnownAnswer

# What every design's answer export starts with: who read, where in their list (and which
# read a hidden repeat repeats), and which case.
CASE_HEADER = ("study", "reader", "sequence", "repeat_of_sequence", "item", "task_key", "modality",
               "disease", "direction")
HEADER = (*CASE_HEADER, "round", "version", "retracted", "after_reveal", "compliance",
          "structure", "realism", "fidelity", "overall", "confidence", "tags", "comment", "time_on_case_ms",
          "answered_at_utc", "roi", "ssim_outside_roi", "changed_outside_roi")
# Rows fetched from the database per round trip while streaming.
CHUNK = 500


DESIGN_HEADER = ("study", "seed", "reader", "order_seed", "sequence", "repeat_of_sequence", "item",
                 "stratum", "case_id", "task_key", "modality", "disease", "direction", "round",
                 "judge_verdict_id",  # the frozen verdict each item is compared with
                 "shows",  # edit, or original (a real-or-edited study's truth)
                 "known_answer")  # the settled answer's id of a known-answer case, else empty


def stream_csv(session: Session, header: tuple[str, ...], query: Any,
               row_of: Callable[[Any], tuple[object, ...]]) -> Iterator[str]:
    """The header, then a row for each of the query's results, CHUNK rows at a time: every
    study export streams the same way, however many answers it holds."""
    rows = CsvRows()
    rows.writerow(header)
    yield rows.take()
    for n, found in enumerate(session.execute(query.execution_options(yield_per=CHUNK))):
        rows.writerow(row_of(found))
        if n % CHUNK == CHUNK - 1:
            yield rows.take()
    yield rows.take()


def iter_design_csv(session: Session, study: Study, extra_header: tuple[str, ...] = (),
                    extra: Callable[[int], tuple[object, ...]] | None = None) -> Iterator[str]:
    """The sample and each reader's order; a design adds its own columns per item (a pair's
    other edit) through ``extra_header`` and ``extra``."""
    rows = CsvRows()
    rows.writerow(DESIGN_HEADER + extra_header)
    yield rows.take()
    sequences = sequences_of(session, study)
    query = (select(Assignment, col(User.name), col(StudyReader.order_seed), StudyItem, Task,
                    col(Attempt.round))
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyReader, (col(StudyReader.study_id) == Assignment.study_id)
                   & (col(StudyReader.user_id) == Assignment.user_id))
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .where(col(Assignment.study_id) == study.id)
             .order_by(col(User.name), col(Assignment.sequence))
             .execution_options(yield_per=CHUNK))
    for n, (assignment, reader, order_seed, item, task, round_) in enumerate(session.execute(query)):
        rows.writerow((study.name, study.seed, reader, order_seed, assignment.sequence,
                              sequences.get(assignment.repeat_of, "") if assignment.repeat_of else "",
                              item.uid, item.stratum, task.id, task.task_key, task.modality,
                              task.disease, task.direction, round_, item.judge_verdict_id or "",
                              item.shows, item.known_answer_id or "",
                              *(extra(item.id or 0) if extra else ())))
        if n % CHUNK == CHUNK - 1:
            yield rows.take()
    yield rows.take()


def sequences_of(session: Session, study: Study) -> dict[int, int]:
    return {row[0]: row[1] for row in session.execute(
        select(col(Assignment.id), col(Assignment.sequence))
        .where(col(Assignment.study_id) == study.id))}


def answer_versions(table: Any, study: Study, *more: Any) -> Any:
    """Every version of a design's answers (``table``) in the study, as (answer, assignment,
    reader's name, item, task, *more), by reader, their list's order and version."""
    return (select(table, Assignment, col(User.name), StudyItem, Task, *more)
            .join(Assignment, col(Assignment.id) == table.assignment_id)
            .join(User, col(User.id) == Assignment.user_id)
            .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
            .join(Task, col(Task.id) == StudyItem.task_id)
            .where(col(Assignment.study_id) == study.id)
            .order_by(col(User.name), col(Assignment.sequence), col(table.version)))


def case_cells(study: Study, sequences: dict[int, int], assignment: Assignment, reader: str,
               item: StudyItem, task: Task) -> tuple[object, ...]:
    """The CASE_HEADER cells of one answer; ``sequences``: sequences_of the study."""
    return (study.name, reader, assignment.sequence,
            sequences.get(assignment.repeat_of, "") if assignment.repeat_of else "",
            item.uid, task.task_key, task.modality, task.disease, task.direction)


def iter_answer_csv(session: Session, study: Study, known: bool = False) -> Iterator[str]:
    """Every answer version of the study's cases; ``known``: of its known-answer cases alone,
    each with the settled answers it is scored against (they are kept apart)."""
    sequences = sequences_of(session, study)
    query = (answer_versions(Answer, study, col(Attempt.round), RoiMetric, col(KnownAnswer.answers))
             .outerjoin(RoiMetric, col(RoiMetric.answer_id) == Answer.id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .outerjoin(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)
             .where(~in_figures() if known else in_figures()))

    def row(found: Any) -> tuple[object, ...]:
        answer, assignment, reader, item, task, round_, roi, settled = found
        return (*case_cells(study, sequences, assignment, reader, item, task), round_,
                answer.version, answer.retracted, answer.after_reveal,
                answer.compliance, answer.structure,
                answer.realism, answer.fidelity, answer.overall, answer.confidence,
                answer.tags, answer.comment, answer.time_on_case_ms,
                answer.created_at.strftime("%Y-%m-%d %H:%M:%S"), answer.roi or "",
                # Empty until the background worker has measured the region.
                figure_cell(roi.ssim_outside_roi if roi else None),
                figure_cell(roi.changed_outside_roi if roi else None),
                *((settled,) if known else ()))

    return stream_csv(session, HEADER + (("settled_answers",) if known else ()), query, row)


def figure_cell(value: float | None) -> str:
    """A measured figure as a CSV cell: four decimals, empty when not measured."""
    return "" if value is None else f"{value:.4f}"
