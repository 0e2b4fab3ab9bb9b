"""Turning the new-study form's fields into a StudyPlan (plain values in, plan out)."""

from collections.abc import Mapping
from typing import Any

from app.agreement.planner import plan_cases
from app.cases.filters import CaseFilter
from app.studies.design import StudyError, StudyPlan
from app.studies.models import Design, Reveal

COUNT_PREFIX = "n:"  # form fields "n:fail/add/chest_xray" carry each stratum's count
PAPER_PER_STRATUM = 25  # 50 add + 50 remove, half of each judged pass and half fail


def strata_counts(fields: Mapping[str, Any]) -> dict[str, int]:
    """The per-stratum counts of a submitted form; a count that is not a whole number is
    refused with the stratum named."""
    counts: dict[str, int] = {}
    for name, raw in fields.items():
        if not name.startswith(COUNT_PREFIX):
            continue
        key, text = name[len(COUNT_PREFIX):], str(raw).strip()
        if not text:
            continue
        if not text.isdigit() or len(text) > 6:
            raise StudyError(f"the count for stratum {key!r} must be a whole number (not {text!r})")
        counts[key] = int(text)
    return counts


def planned_from_form(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The planner's inputs as typed, and its answer, when the form's planner was filled in."""
    agreement, half = fields.get("plan_agreement"), fields.get("plan_half_width")
    if not agreement or not half:
        return None
    try:
        icc = float(fields["plan_icc"]) if fields.get("plan_icc") else None
        edits = float(fields.get("plan_edits_per_image") or 1.0)
        plan = plan_cases(float(agreement), float(half), edits_per_image=edits, icc=icc)
    except ValueError as error:  # PlanError is a ValueError; so is float("abc")
        raise StudyError(f"planner: {error}") from error
    return plan.as_dict()


def plan_from_form(*, name: str, case_filter: CaseFilter, design: Design, facets: list[str],
                   counts: dict[str, int], total: int | None, seed: int, primary_question: str,
                   reader_ids: list[int], readers_per_case: int | None, repeat_fraction: float,
                   blinded: bool, reveal: Reveal, planned: dict[str, Any] | None,
                   hide_instructions: bool = False) -> StudyPlan:
    if not facets and not total:
        raise StudyError("give the number of cases, or strata with their counts")
    return StudyPlan(
        name=name.strip(), case_filter=case_filter, reader_ids=reader_ids, design=design,
        seed=seed, strata_facets=tuple(facets), per_stratum=counts if facets else {},
        total=None if facets else total, primary_question=primary_question,
        readers_per_case=readers_per_case, repeat_fraction=repeat_fraction, blinded=blinded,
        reveal=reveal, planned=planned, show_instructions=not hide_instructions,
    )
