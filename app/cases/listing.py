"""Listing cases page by page (keyset on the task id), and stepping to neighbours."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_, select
from sqlmodel import Session, col

from app.cases import facets
from app.cases.filters import SORTS, CaseFilter, SelectT, filtered, where_clauses
from app.models import AttemptMetric, Run, SourceImage, Task
from pipeline.vocabulary import DIMENSION_BITS


@dataclass(frozen=True)
class CaseRow:
    id: int
    task_key: str
    dataset: str
    modality: str
    disease: str
    direction: str
    outcome: str | None
    n_rounds: int
    failed_dimensions: list[str]
    source_image_id: int
    source_present: bool
    thumb_attempt_id: int | None
    final_instruction: str | None
    metric: "FinalMetrics | None" = None  # of the final edit, once measured


@dataclass(frozen=True)
class FinalMetrics:
    """The preservation metrics of a case's final edit (app/images/metrics.py), as listed."""

    psnr: float | None
    ssim: float | None
    ssim_outside: float | None
    changed_fraction: float | None
    changed_regions: int | None
    side: int
    error: None = None  # a listed edit's metrics are those that could be computed


@dataclass(frozen=True)
class CasePage:
    items: list[CaseRow]
    total: int
    next_after: int | None
    prev_before: int | None


def failed_dimensions(mask: int) -> list[str]:
    return [dim.value for dim, bit in DIMENSION_BITS.items() if mask & bit]


def _ordered(query: SelectT, case_filter: CaseFilter, dialect: str, session: Session,
             after: int | None, before: int | None, found: facets.Summary) -> tuple[SelectT, bool]:
    """The filtered query in the filter's order, from a cursor (a task id) either way.

    By id, the cursor is the key itself; by a metric, the order is (metric, id) and the
    cursor task's metric is looked up, so pages stay stable whatever the sort."""
    # The filter's facet counts (``found``) know how many tasks the text matches, which
    # chooses how PostgreSQL finds them (filters.filtered), and between which ids the
    # selected tasks lie; for the page and its neighbours alike.
    text_matches = found.matched if dialect == "postgresql" and case_filter.q.strip() else None
    query, key = filtered(query, case_filter, dialect, text_matches=text_matches)
    backwards = before is not None and after is None
    metric = SORTS.get(case_filter.sort)
    if metric is None:
        # By id, the span lets the walk in id order start at the first selected task. The
        # cursor narrows the span rather than adding a bound of its own: SQLite walks the
        # primary key between one lower and one upper bound and only filters by the others,
        # so with both it walked from the span's end to the cursor (10 ms for a neighbour).
        # A metric order walks its own index, where the span would only mislead the planner.
        low, high = found.ids
        if backwards and before is not None:
            return query.where(key.between(low, min(high, before - 1))).order_by(key.desc()), True
        if after is not None:
            low = max(low, after + 1)
        return query.where(key.between(low, high)).order_by(key), False
    cursor = before if backwards else after
    if cursor is not None:
        value = session.scalar(select(metric).where(col(Task.id) == cursor))
        if value is not None:
            beyond = ((metric < value, and_(metric == value, key < cursor)) if backwards
                      else (metric > value, and_(metric == value, key > cursor)))
            query = query.where(or_(*beyond))
    if backwards:
        return query.order_by(metric.desc(), key.desc()), True
    return query.order_by(metric, key), False


@dataclass(frozen=True)
class BrowserView:
    """The case browser: a page of cases and the facet counts beside it."""

    filter: CaseFilter
    page: CasePage
    facets: dict[str, list[facets.FacetValue]]


def browser_view(session: Session, case_filter: CaseFilter, *, limit: int,
                 after: int | None = None, before: int | None = None) -> BrowserView:
    """The page of cases and its facets, from one scan of the filter's facet cube."""
    found = facets.summary(session, case_filter)
    page = list_cases(session, case_filter, limit=limit, after=after, before=before, summary=found)
    return BrowserView(case_filter, page, found.facets)


def list_cases(session: Session, case_filter: CaseFilter, *, limit: int,
               after: int | None = None, before: int | None = None,
               summary: facets.Summary | None = None) -> CasePage:
    dialect = session.get_bind().dialect.name
    # Columns, not ORM objects: building two mapped instances per row was a quarter of
    # the request.
    query = (
        select(*_LISTED)
        .join(SourceImage, col(SourceImage.id) == Task.source_image_id)
        .outerjoin(Run, col(Run.id) == Task.latest_run_id)
        .outerjoin(AttemptMetric, col(AttemptMetric.attempt_id) == Task.thumb_attempt_id)
    )
    # Looked up once a request: under a metric bound its key counts the stored metrics.
    summary = summary if summary is not None else facets.summary(session, case_filter)
    query, backwards = _ordered(query, case_filter, dialect, session, after, before, summary)
    # Core execution: the ORM sets up a row processor per column entity on every call, a
    # quarter of this function for rows that are plain columns anyway.
    rows = list(session.connection().execute(query.limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    if backwards:
        rows.reverse()
    items = [_row(row) for row in rows]
    has_before = bool(items) and (after is not None or (backwards and more))
    has_after = bool(items) and (more if not backwards else True)
    return CasePage(
        items=items, total=summary.total,
        next_after=items[-1].id if has_after else None,
        prev_before=items[0].id if has_before else None,
    )


_LISTED = (col(Task.id), col(Task.task_key), col(Task.dataset), col(Task.modality),
           col(Task.disease), col(Task.direction), col(Task.outcome), col(Task.n_rounds),
           col(Task.failed_mask), col(Task.source_image_id), col(Task.thumb_attempt_id),
           col(SourceImage.present), col(Run.final_instruction), col(AttemptMetric.attempt_id),
           col(AttemptMetric.error), col(AttemptMetric.psnr), col(AttemptMetric.ssim),
           col(AttemptMetric.ssim_outside), col(AttemptMetric.changed_fraction),
           col(AttemptMetric.changed_regions), col(AttemptMetric.side))


def _row(row: Any) -> CaseRow:
    (task_id, key, dataset, modality, disease, direction, outcome, n_rounds, mask, source_id,
     thumb_id, present, instruction, measured_id, error, *figures) = row
    return CaseRow(
        id=task_id, task_key=key, dataset=dataset, modality=modality, disease=disease,
        direction=direction, outcome=outcome, n_rounds=n_rounds,
        failed_dimensions=failed_dimensions(mask), source_image_id=source_id,
        source_present=bool(present), thumb_attempt_id=thumb_id, final_instruction=instruction,
        metric=FinalMetrics(*figures) if measured_id is not None and error is None else None,
    )


def neighbours(session: Session, case_filter: CaseFilter, task_id: int) -> tuple[int | None, int | None]:
    """The previous and next case ids in the filter's order."""
    dialect = session.get_bind().dialect.name
    base: Any = select(col(Task.id))
    found = facets.summary(session, case_filter)
    prev_query, _ = _ordered(base, case_filter, dialect, session, None, task_id, found)
    next_query, _ = _ordered(base, case_filter, dialect, session, task_id, None, found)
    conn = session.connection()
    return conn.scalar(prev_query.limit(1)), conn.scalar(next_query.limit(1))


def existing_task_ids(session: Session, wanted: list[int]) -> list[int]:
    """Those of ``wanted`` that are tasks, in the order given, each once."""
    ids = list(dict.fromkeys(wanted))
    if not ids:
        return []
    known = set(session.scalars(select(col(Task.id)).where(col(Task.id).in_(ids))))
    return [t for t in ids if t in known]


def task_ids_matching(session: Session, case_filter: CaseFilter, limit: int | None = None) -> list[int]:
    """Every task id the filter selects, in id order (for a job or a study)."""
    dialect = session.get_bind().dialect.name
    query = select(col(Task.id)).where(*where_clauses(case_filter, dialect)).order_by(col(Task.id))
    if limit:
        query = query.limit(limit)
    return list(session.scalars(query))
