"""The one language for selecting cases, shared by /cases, /api/cases and the CLI.

Within a facet the chosen values are alternatives (OR); across facets they all apply (AND).
"""

import operator
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar
from urllib.parse import urlencode

from sqlalchemy import ColumnElement, Select, func, literal_column, or_
from sqlmodel import col

from app.cases import search
from app.models import Task
from pipeline.vocabulary import DIMENSION_BITS, Dimension

# Facet name -> Task column it filters; failed_dimension is a bit test on failed_mask.
FACET_COLUMNS: dict[str, Any] = {
    "modality": col(Task.modality),
    "disease": col(Task.disease),
    "direction": col(Task.direction),
    "outcome": col(Task.outcome),
    "rounds": col(Task.n_rounds),
}
FACETS = (*FACET_COLUMNS, "failed_dimension")

# Preservation bounds, on the metrics of a case's final edit (mirrored on Task):
# name -> (column, comparison, factor from the URL's unit to the column's).
METRIC_BOUNDS: dict[str, tuple[Any, Callable[[Any, Any], Any], float]] = {
    "changed_min": (col(Task.final_changed), operator.ge, 0.01),  # URL: percent
    "changed_max": (col(Task.final_changed), operator.le, 0.01),
    "ssim_outside_max": (col(Task.final_ssim_outside), operator.le, 1.0),
    "regions_min": (col(Task.final_regions), operator.ge, 1.0),
}


def _last_if_missing(column: Any, stand_in: str) -> Any:
    # The stand-in is inlined, not bound, so the SQL matches the expression indexes of
    # migration 0009 (an index on an expression is only used for that exact expression).
    return func.coalesce(column, literal_column(stand_in))


# Orders besides the id: each an ascending SQL key, cases not yet measured last.
SORTS: dict[str, Any] = {
    "changed": -_last_if_missing(col(Task.final_changed), "-1.0"),  # largest first
    "ssim_outside": _last_if_missing(col(Task.final_ssim_outside), "2.0"),  # worst kept first
    "regions": -_last_if_missing(col(Task.final_regions), "-1"),  # most first
    "psnr": _last_if_missing(col(Task.final_psnr), "1000000000.0"),  # lowest; identical last
}


@dataclass(frozen=True)
class CaseFilter:
    modality: tuple[str, ...] = ()
    disease: tuple[str, ...] = ()
    direction: tuple[str, ...] = ()
    outcome: tuple[str, ...] = ()
    rounds: tuple[int, ...] = ()
    failed_dimension: tuple[str, ...] = ()
    q: str = ""
    changed_min: float | None = None
    changed_max: float | None = None
    ssim_outside_max: float | None = None
    regions_min: int | None = None
    sort: str = ""  # a key of SORTS; empty is by id

    def values(self, facet: str) -> tuple[str, ...]:
        return tuple(str(v) for v in getattr(self, facet))

    def bounds(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in METRIC_BOUNDS
                if getattr(self, name) is not None}

    def is_empty(self) -> bool:
        return (not any(getattr(self, f) for f in FACETS) and not self.q.strip()
                and not self.bounds())

    def base(self) -> "CaseFilter":
        """What the facet counts start from: the text and the metric bounds."""
        return CaseFilter(q=self.q, **self.bounds())  # type: ignore[arg-type]

    def toggled(self, facet: str, value: str) -> "CaseFilter":
        """The filter with ``value`` added to or removed from ``facet``."""
        current = list(getattr(self, facet))
        typed: str | int = int(value) if facet == "rounds" else value
        current = [v for v in current if v != typed] if typed in current else [*current, typed]
        changes: dict[str, Any] = {facet: tuple(current)}
        return replace(self, **changes)

    def cleared(self, facet: str) -> "CaseFilter":
        changes: dict[str, Any] = {facet: ()}
        return replace(self, **changes)

    def query_pairs(self) -> list[tuple[str, str]]:
        pairs = [(f, str(v)) for f in FACETS for v in getattr(self, f)]
        if self.q.strip():
            pairs.append(("q", self.q.strip()))
        pairs += [(name, f"{value:g}") for name, value in self.bounds().items()]
        if self.sort:
            pairs.append(("sort", self.sort))
        return pairs

    def without_bounds(self) -> "CaseFilter":
        changes: dict[str, Any] = dict.fromkeys(METRIC_BOUNDS)
        return replace(self, **changes)

    def sorted_by(self, sort: str) -> "CaseFilter":
        return replace(self, sort=sort)

    def query_string(self) -> str:
        return urlencode(self.query_pairs())


def where_clauses(case_filter: CaseFilter, dialect: str, *,
                  with_text: bool = True) -> list[ColumnElement[bool]]:
    """SQL conditions on Task for the filter. Pages leave the text out and join it instead
    (see ``filtered``), which lets the search index stop after one page."""
    clauses: list[ColumnElement[bool]] = []
    for facet, column in FACET_COLUMNS.items():
        chosen = getattr(case_filter, facet)
        if chosen:
            clauses.append(column.in_(chosen))
    if case_filter.failed_dimension:
        bits = [DIMENSION_BITS[Dimension(d)] for d in case_filter.failed_dimension]
        clauses.append(or_(*[col(Task.failed_mask).op("&")(bit) != 0 for bit in bits]))
    bounds = case_filter.bounds()
    clauses += [compare(column, bounds[name] * factor)
                for name, (column, compare, factor) in METRIC_BOUNDS.items() if name in bounds]
    text_match = search.matching_tasks(dialect, case_filter.q) if with_text else None
    if text_match is not None:
        clauses.append(text_match)
    return clauses


def recorded_filter(raw: dict[str, Any]) -> CaseFilter:
    """The CaseFilter a study recorded (lists back to tuples; unknown keys ignored)."""
    known = {f.name for f in fields(CaseFilter)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in raw.items() if k in known}
    return CaseFilter(**values)


def recorded_criteria(recorded: dict[str, Any]) -> list[tuple[str, str]]:
    """A study's recorded filter (``asdict`` of a CaseFilter) as (label, values) pairs: the
    choices made, each facet's values joined by "or", a metric bound as its number. The
    order cases were listed in does not change a selection, so the sort is left out."""
    criteria = []
    for key, value in recorded.items():
        if key == "sort" or value is None or value in ("", (), []):
            continue
        shown = str(value) if isinstance(value, str | int | float) else " or ".join(map(str, value))
        criteria.append((key.replace("_", " "), shown))
    return criteria


SelectT = TypeVar("SelectT", bound=Select)


def filtered(query: SelectT, case_filter: CaseFilter, dialect: str, *,
             text_matches: int | None = None) -> tuple[SelectT, Any]:
    """``query`` restricted to the filter, and the column that orders cases (equal to Task.id).
    ``text_matches``: how many tasks the text and the metric bounds match, when the caller
    knows (the facet counts do), which chooses how PostgreSQL finds them
    (``search.few_matches``). Only without bounds is that the text's own count: under a
    tight bound a common word would read all its matches first (150 ms on 88K, against
    30 ms for the walk), so a bounded search keeps the walk."""
    query = query.where(*where_clauses(case_filter, dialect, with_text=False))
    match = search.text_match(dialect, case_filter.q)
    if match is None:
        return query, Task.id
    if (dialect == "postgresql" and text_matches is not None and not case_filter.bounds()
            and search.few_matches(text_matches)):
        hits = search.matches_first(match)
        return query.join(hits, hits.c.task_id == Task.id), hits.c.task_id
    return query.join(match.table, match.key == Task.id).where(match.condition), match.key
