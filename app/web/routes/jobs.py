"""Admins: regenerate selected cases from the browser, and follow each job live."""

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import BaseModel, Field, field_validator
from sqlmodel import col, select

from app.cases.listing import existing_task_ids, task_ids_matching
from app.job_models import Job, JobStatus
from app.jobs import (
    DEFAULT_MODELS,
    JobOptions,
    available,
    create_job,
    job_batches,
    job_estimate,
    job_runs,
    job_summary,
    request_cancel,
)
from app.web.deps import MAX_DB_ID, CaseFilterDep, IdPath, IdValue, SessionDep
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
TaskIds = Annotated[list[int] | None, Query(alias="task")]
MAX_TASKS = 100_000
MODEL_NAME = r"^$|^[A-Za-z0-9._-]+$"


class JobForm(BaseModel):
    """The job form: what to run on which tasks, and the quota to keep to; posted to start a
    job, and to estimate it as the form changes."""

    task: list[IdValue] | None = Field(None, max_length=100_000)
    everything: bool = False
    kind: str = Field("regenerate", pattern="^(regenerate|rejudge)$")
    rounds: int = Field(5, ge=1, le=20)
    rejudge_times: int = Field(3, ge=1, le=20)
    backend: str = Field("offline", max_length=32)
    concurrency: int = Field(8, ge=1, le=256)
    requests_per_minute: int | None = Field(None, ge=1, le=100_000)
    requests_per_day: int | None = Field(None, ge=1, le=100_000_000)
    tokens_per_minute: int | None = Field(None, ge=1, le=1_000_000_000)
    use_reader_feedback: bool = False
    mode: str = Field("interactive", pattern="^(interactive|batch)$")
    instruction_model: str = Field("", max_length=100, pattern=MODEL_NAME)
    edit_model: str = Field("", max_length=100, pattern=MODEL_NAME)
    judge_model: str = Field("", max_length=100, pattern=MODEL_NAME)

    @field_validator("requests_per_minute", "requests_per_day", "tokens_per_minute",
                     mode="before")
    @classmethod
    def blank_is_none(cls, value: object) -> object:
        return None if value == "" else value  # an empty box means no limit

    def options(self, backends: list[str]) -> JobOptions:
        if self.backend not in backends:
            raise HTTPException(422, f"backend must be one of: {', '.join(backends)}")
        if self.mode == "batch" and self.backend != "gemini":
            raise HTTPException(422, "the Batch API needs the gemini backend")
        models = {step: name for step, name in (("instruction", self.instruction_model),
                                                 ("edit", self.edit_model),
                                                 ("judge", self.judge_model)) if name}
        return JobOptions(backend=self.backend, rounds=self.rounds, concurrency=self.concurrency,
                          requests_per_minute=self.requests_per_minute,
                          requests_per_day=self.requests_per_day,
                          tokens_per_minute=self.tokens_per_minute, kind=self.kind,
                          rejudge_times=self.rejudge_times, models=models,
                          use_reader_feedback=self.use_reader_feedback, mode=self.mode)


def _selection(session: SessionDep, case_filter: Any, task_ids: list[int] | None,
               everything: bool) -> list[int]:
    if everything:
        return task_ids_matching(session, case_filter, MAX_TASKS)
    return existing_task_ids(session, [t for t in task_ids or [] if 1 <= t <= MAX_DB_ID])


@router.get("/jobs/new", response_class=HTMLResponse)
def new_job(request: Request, session: SessionDep, case_filter: CaseFilterDep,
            task: TaskIds = None,
            everything: Annotated[bool, Query(alias="all")] = False) -> HTMLResponse:
    chosen = _selection(session, case_filter, task, everything)
    if not chosen:
        raise HTTPException(422, "tick at least one case, or choose all cases matching the filter")
    options = JobOptions(backend=available()[0])
    context = {"task_ids": [] if everything else chosen, "everything": everything,
               "count": len(chosen),
               "filter": case_filter, "backends": available(),
               "options": options, "models": DEFAULT_MODELS,
               "estimate": job_estimate(session, chosen, options)}
    return render(request, "jobs/new.html", context)


@router.post("/jobs/estimate", response_class=HTMLResponse)
def estimate_job(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                 form: Annotated[JobForm, Form()]) -> HTMLResponse:
    """The estimate again, for the form's current values (the form asks on every change).
    Posted like the form itself: the filter is in the query, where "rounds" is the filter's
    rounds, and the job's own fields are in the body."""
    chosen = _selection(session, case_filter, form.task, form.everything)
    if not chosen:
        raise HTTPException(422, "tick at least one case, or choose all cases matching the filter")
    options = form.options(available())
    return render(request, "jobs/_estimate.html",
                  {"estimate": job_estimate(session, chosen, options), "options": options})


@router.post("/jobs")
def start_job(request: Request, session: SessionDep, admin: AdminUser,
              case_filter: CaseFilterDep, form: Annotated[JobForm, Form()]) -> RedirectResponse:
    options = form.options(available())
    chosen = _selection(session, case_filter, form.task, form.everything)
    if not chosen:
        raise HTTPException(422, "no case selected")
    job_id = create_job(session.get_bind(), chosen, options, admin.id)  # type: ignore[arg-type]
    return redirect(request, f"/jobs/{job_id}")


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(request: Request, session: SessionDep) -> HTMLResponse:
    jobs = session.scalars(select(Job).order_by(col(Job.id).desc()).limit(200)).all()
    return render(request, "jobs/list.html", {"jobs": [job_summary(j) for j in jobs]})


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_page(request: Request, session: SessionDep, job_id: IdPath) -> HTMLResponse:
    job = session.get(Job, job_id)
    if job is None:
        raise HTTPException(404, f"no job {job_id}")
    context = {"job": job_summary(job), "runs": job_runs(session, job_id),
               "batches": job_batches(session, job_id),
               "live": job.status in (JobStatus.queued, JobStatus.running)}
    return render(request, "jobs/detail.html", context, partial="jobs/_progress.html")


@router.post("/jobs/{job_id}/cancel")
def cancel_job(request: Request, session: SessionDep, job_id: IdPath) -> RedirectResponse:
    try:
        request_cancel(session.get_bind(), job_id)  # type: ignore[arg-type]
    except LookupError:
        raise HTTPException(404, f"no job {job_id}") from None
    return redirect(request, f"/jobs/{job_id}")
