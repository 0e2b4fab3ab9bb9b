"""Turning the new-study form's fields into a StudyPlan (plain values in, plan out)."""

import re

from app.case_filter import CaseFilter
from app.study_design import StudyError, StudyPlan
from app.study_models import Reveal

STRATUM = re.compile(r"^\s*([^=,]+?)\s*=\s*(\d+)\s*$")


def parse_strata(text: str) -> dict[str, int]:
    """'add=50, remove=50' -> {'add': 50, 'remove': 50}."""
    result: dict[str, int] = {}
    for part in filter(str.strip, text.split(",")):
        match = STRATUM.match(part)
        if not match:
            raise StudyError(f"write strata as value=count, separated by commas (not {part.strip()!r})")
        result[match[1]] = int(match[2])
    if not result:
        raise StudyError("give at least one stratum, e.g. add=50, remove=50")
    return result


def plan_from_form(*, name: str, case_filter: CaseFilter, strata_facet: str, strata: str,
                   total: int | None, seed: int, include_failed_rounds: bool,
                   reader_ids: list[int], readers_per_case: int | None, repeat_fraction: float,
                   blinded: bool, reveal: Reveal) -> StudyPlan:
    stratified = bool(strata_facet)
    if not stratified and not total:
        raise StudyError("give the number of cases, or strata with their counts")
    return StudyPlan(
        name=name.strip(), case_filter=case_filter, reader_ids=reader_ids, seed=seed,
        strata_facet=strata_facet or None,
        per_stratum=parse_strata(strata) if stratified else {},
        total=None if stratified else total, include_failed_rounds=include_failed_rounds,
        readers_per_case=readers_per_case, repeat_fraction=repeat_fraction, blinded=blinded,
        reveal=reveal,
    )
