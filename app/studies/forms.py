"""Turning the new-study form's fields into a StudyPlan (plain values in, plan out)."""

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from app.cases.filters import CaseFilter
from app.models import MAX_DB_ID
from app.studies.design import StudyError, StudyPlan
from app.studies.design_traits import default_design
from app.studies.models import Design, Reveal
from app.studies.planner import plan_cases
from app.studies.practice import Requirement
from app.studies.reading_setup import MAX_INSTRUCTIONS
from app.studies.targets import ENDPOINTS, MAX_TARGET, field_of
from app.studies.viewer_tools import VIEWER_TOOLS

ViewerTool = Literal[*VIEWER_TOOLS]  # type: ignore[valid-type]

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


class StudyForm(BaseModel):
    """The new-study form's fixed fields (the per-stratum counts and the planner's inputs are
    read apart: their names are data)."""

    name: str = Field(max_length=200)
    readers: list[Annotated[int, Field(ge=1, le=MAX_DB_ID)]] = Field([], max_length=1000)
    design: Design = Field(default_factory=default_design)
    facets: list[str] = Field([], max_length=8)
    seed: int = Field(42, ge=0, le=2**31 - 1)
    total: int | None = Field(None, ge=1, le=20_000)
    primary_question: str = Field("overall", max_length=16)
    readers_per_case: int | None = Field(None, ge=1, le=100)
    repeat_fraction: float = Field(0.0, ge=0, le=0.5)
    # In percent of each reader's reads: how a reader study states it. Checked (0-50 %) by
    # the study's own rule, which names the field.
    known_share: float = Field(0.0, ge=0, le=100)
    # A qualification asked of every reader (app/studies/practice.py); checked (0-1, at most
    # the practice study's cases) by the study's own rule, which names the field.
    qualify_practice: int | None = Field(None, ge=1, le=MAX_DB_ID)
    qualify_threshold: float = Field(0.6, allow_inf_nan=False)
    qualify_cases: int = Field(20, ge=0, le=100_000)
    qualify_on: Literal["estimate", "lower_bound"] = "estimate"
    blinded: bool = False
    reveal: Reveal = Reveal.never
    hide_instructions: bool = False
    instructions: str = Field("", max_length=MAX_INSTRUCTIONS)
    viewer_tools: list[ViewerTool] = Field([], max_length=len(VIEWER_TOOLS))
    original_share: float = Field(0.5, ge=0.1, le=0.9)  # a real-or-edited study's originals
    batch_images: int = Field(10, ge=1, le=100)  # an adaptive study's draws per batch
    margin: float = Field(0.05, gt=0, le=0.5)
    # The half-width at which the study may stop, per endpoint (app/studies/targets.py).
    target_agreement: float | None = Field(None, gt=0, le=MAX_TARGET)
    target_too_strict: float | None = Field(None, gt=0, le=MAX_TARGET)
    target_too_lenient: float | None = Field(None, gt=0, le=MAX_TARGET)

    def targets(self) -> dict[str, float]:
        return {e: value for e in ENDPOINTS
                if (value := getattr(self, field_of(e))) is not None}

    def as_shown(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        """The values to show the form with again, the planner's as typed."""
        return {**self.model_dump(), "reader_ids": self.readers,
                **{k: v for k, v in extra.items() if k.startswith("plan_")}}

    @classmethod
    def shown_as_typed(cls, fields: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
        """A form refused field by field: every value as typed, so nothing is lost (a reader
        id that is not a number is dropped; it came from no box on the page)."""
        shown: dict[str, Any] = {name: info.default for name, info in cls.model_fields.items()}
        shown.update(fields)
        shown["reader_ids"] = [int(r) for r in fields.get("readers", []) if str(r).isdigit()]
        shown["blinded"] = "blinded" in fields
        shown["hide_instructions"] = "hide_instructions" in fields
        return {**shown, **{k: v for k, v in extra.items() if k.startswith("plan_")}}


class ReadingSetupForm(BaseModel):
    """The study page's form: what readers are told and the tools they get."""

    instructions: str = Field("", max_length=MAX_INSTRUCTIONS)
    viewer_tools: list[ViewerTool] = Field([], max_length=len(VIEWER_TOOLS))


def plan_from_form(form: StudyForm, case_filter: CaseFilter, counts: dict[str, int],
                   planned: dict[str, Any] | None) -> StudyPlan:
    if form.design.pairs:  # its units are pairs of a kind, chosen on a form of its own
        raise StudyError("a pairwise study is made from its own form (New pairwise study), "
                         "which chooses the kind of pairs", field="design")
    adaptive = form.design.draws_in_batches
    if adaptive and not form.total:
        raise StudyError("give the most edits the adaptive study may draw", field="total")
    if not form.facets and not form.total:
        raise StudyError("give the number of cases, or strata with their counts", field="total")
    if adaptive:  # image-level strata, and no counts: the batches allocate as they go
        form = form.model_copy(update={"facets": ["modality"]})
        counts = {}
    return StudyPlan(
        name=form.name.strip(), case_filter=case_filter, reader_ids=form.readers,
        design=form.design, seed=form.seed, strata_facets=tuple(form.facets),
        per_stratum=counts if form.facets else {},
        total=form.total if adaptive or not form.facets else None, batch_images=form.batch_images,
        primary_question=form.primary_question, readers_per_case=form.readers_per_case,
        repeat_fraction=form.repeat_fraction, blinded=form.blinded, reveal=form.reveal,
        planned=planned, show_instructions=not form.hide_instructions,
        instructions=form.instructions, viewer_tools=tuple(form.viewer_tools),
        original_share=form.original_share, margin=form.margin, targets=form.targets(),
        known_share=form.known_share / 100,
        qualification=Requirement(form.qualify_practice, form.qualify_threshold,
                                  form.qualify_cases, form.qualify_on)
        if form.qualify_practice else None,
    )
