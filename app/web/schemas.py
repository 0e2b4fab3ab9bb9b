"""JSON shapes of the API; response_model filters what leaves the server."""

from datetime import datetime

from pydantic import BaseModel, field_validator

from app.cases.detail import AttemptView, CaseView, RunView
from app.cases.listing import CaseRow, FinalMetrics, failed_dimensions
from app.models import AttemptMetric
from pipeline.redaction import redact_optional


class SourceImageOut(BaseModel):
    id: int
    dataset: str
    category: str
    filename: str
    present: bool
    url: str | None


class CaseBase(BaseModel):
    """What identifies a case, shared by the list and the detail."""

    id: int
    task_key: str
    dataset: str
    modality: str
    disease: str
    direction: str
    outcome: str | None
    failed_dimensions: list[str]


class MetricsOut(BaseModel):
    """Preservation of an edit against its original (app/images/metrics.py), at ``side`` pixels."""

    psnr: float | None  # None: identical images
    ssim: float
    ssim_outside: float | None  # SSIM outside the changed region; None: all changed
    changed_fraction: float
    changed_regions: int
    side: int


def metrics_out(metric: AttemptMetric | FinalMetrics | None) -> MetricsOut | None:
    if metric is None or metric.error is not None:
        return None
    return MetricsOut.model_validate(metric, from_attributes=True)


class CaseSummary(CaseBase):
    rounds: int
    url: str
    original_thumb_url: str | None
    edit_thumb_url: str | None
    final_edit_metrics: MetricsOut | None = None  # None until measured in the background


class CaseList(BaseModel):
    total: int
    items: list[CaseSummary]
    next: str | None


class ErrorOut(BaseModel):
    """Every error of the API: what went wrong, in words, and the status again."""

    detail: str
    status: int


class VerdictOut(BaseModel):
    id: int
    compliance: bool | None
    structure: bool | None
    realism: bool | None
    fidelity: bool | None
    qualified: bool | None
    has_disease: bool | None
    weighted_score: float | None
    reason: str | None
    thinking_summary: str | None
    error: str | None
    model: str | None
    prompt_version: str | None
    created_at: datetime

    @field_validator("error")
    @classmethod
    def _no_secrets(cls, error: str | None) -> str | None:
        return redact_optional(error)


class AttemptOut(BaseModel):
    id: int
    round: int
    role: str  # "accepted" or "failed"
    instruction: str | None
    instruction_thinking: str | None
    edit_error: str | None
    image_present: bool
    image_url: str | None
    difference_map_url: str | None
    metrics: MetricsOut | None  # None until measured, or when an image cannot be read
    verdicts: list[VerdictOut]


class RunOut(BaseModel):
    id: int
    origin: str
    outcome: str
    rounds: int
    success_round: int | None
    final_instruction: str | None
    failure_step: str | None
    failure_round: int | None
    failure_error: str | None
    created_at: datetime
    attempts: list[AttemptOut] | None  # None for runs other than the one asked for


class CaseOut(CaseBase):
    source_image: SourceImageOut
    latest_run_id: int | None
    runs: list[RunOut]


def image_url(kind: str, image_id: int | None, size: str = "preview") -> str | None:
    return f"/images/{kind}/{image_id}?size={size}" if image_id is not None else None


def case_summary(row: CaseRow) -> CaseSummary:
    return CaseSummary(
        id=row.id, task_key=row.task_key, dataset=row.dataset, modality=row.modality,
        disease=row.disease, direction=row.direction, outcome=row.outcome, rounds=row.n_rounds,
        failed_dimensions=row.failed_dimensions, url=f"/cases/{row.id}",
        original_thumb_url=image_url("source", row.source_image_id, "thumb") if row.source_present else None,
        edit_thumb_url=image_url("attempt", row.thumb_attempt_id, "thumb"),
        final_edit_metrics=metrics_out(row.metric),
    )


def _attempt_out(view: AttemptView) -> AttemptOut:
    a = view.attempt
    assert a.id is not None
    return AttemptOut(
        id=a.id, round=a.round, role="accepted" if view.accepted else "failed",
        instruction=a.instruction, instruction_thinking=a.instruction_thinking,
        edit_error=redact_optional(a.edit_error), image_present=a.image_present,
        image_url=image_url("attempt", a.id) if a.image_present else None,
        difference_map_url=f"/images/diff/{a.id}?size=preview" if a.image_present else None,
        metrics=metrics_out(view.metric),
        verdicts=[VerdictOut.model_validate(v, from_attributes=True) for v in view.verdicts],
    )


def case_out(case: CaseView) -> CaseOut:
    task, source = case.task, case.source
    assert task.id is not None and source.id is not None
    shown: RunView | None = case.shown
    runs = [
        RunOut(
            id=run.id or 0, origin=run.origin, outcome=run.outcome, rounds=run.n_rounds,
            success_round=run.success_round, final_instruction=run.final_instruction,
            failure_step=run.failure_step, failure_round=run.failure_round,
            failure_error=redact_optional(run.failure_error), created_at=run.created_at,
            attempts=[_attempt_out(a) for a in shown.attempts]
            if shown and shown.run.id == run.id else None,
        )
        for run in case.runs
    ]
    return CaseOut(
        id=task.id, task_key=task.task_key, dataset=task.dataset, modality=task.modality,
        disease=task.disease, direction=task.direction, outcome=task.outcome,
        failed_dimensions=failed_dimensions(task.failed_mask),
        source_image=SourceImageOut(
            id=source.id, dataset=source.dataset, category=source.category,
            filename=source.filename, present=source.present,
            url=image_url("source", source.id) if source.present else None),
        latest_run_id=task.latest_run_id, runs=runs,
    )
