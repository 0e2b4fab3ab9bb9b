"""Admins: regenerate selected cases from the browser, and follow each job live."""

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlmodel import col, select

from app.case_list import existing_task_ids, task_ids_matching
from app.deps import MAX_DB_ID, CaseFilterDep, IdPath, IdValue, SessionDep
from app.models import Job, JobStatus
from app.security import AdminUser
from app.web import redirect, render
from pipeline.gemini import DEFAULT_MODELS
from pipeline.jobs import JobOptions, create_job, job_runs, job_summary, request_cancel
from pipeline.registry import available

router = APIRouter(include_in_schema=False)
TaskIds = Annotated[list[int] | None, Query(alias="task")]
MAX_TASKS = 100_000
CALLS_PER_ROUND = 3  # instruction, edit, judge
MODEL_NAME = r"^$|^[A-Za-z0-9._-]+$"


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
    context = {"task_ids": [] if everything else chosen, "everything": everything,
               "count": len(chosen),
               "filter": case_filter, "backends": available(), "calls_per_round": CALLS_PER_ROUND,
               "options": JobOptions(), "models": DEFAULT_MODELS}
    return render(request, "jobs/new.html", context)


@router.post("/jobs")
def start_job(request: Request,
    session: SessionDep, admin: AdminUser, case_filter: CaseFilterDep,
    task: Annotated[list[IdValue] | None, Form(max_length=100_000)] = None,
    everything: Annotated[bool, Form()] = False,
    rounds: Annotated[int, Form(ge=1, le=20)] = 5,
    backend: Annotated[str, Form(max_length=32)] = "offline",
    concurrency: Annotated[int, Form(ge=1, le=256)] = 8,
    requests_per_minute: Annotated[int | None, Form(ge=1, le=100_000)] = None,
    use_reader_feedback: Annotated[bool, Form()] = False,
    kind: Annotated[str, Form(pattern="^(regenerate|rejudge)$")] = "regenerate",
    rejudge_times: Annotated[int, Form(ge=1, le=20)] = 3,
    instruction_model: Annotated[str, Form(max_length=100, pattern=MODEL_NAME)] = "",
    edit_model: Annotated[str, Form(max_length=100, pattern=MODEL_NAME)] = "",
    judge_model: Annotated[str, Form(max_length=100, pattern=MODEL_NAME)] = "",
) -> RedirectResponse:
    backends = available()
    if backend not in backends:
        raise HTTPException(422, f"backend must be one of: {', '.join(backends)}")
    chosen = _selection(session, case_filter, task, everything)
    if not chosen:
        raise HTTPException(422, "no case selected")
    models = {step: name for step, name in (("instruction", instruction_model),
                                             ("edit", edit_model), ("judge", judge_model)) if name}
    options = JobOptions(backend=backend, rounds=rounds, concurrency=concurrency,
                         requests_per_minute=requests_per_minute,
                         use_reader_feedback=use_reader_feedback, kind=kind,
                         rejudge_times=rejudge_times, models=models)
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
               "live": job.status in (JobStatus.queued, JobStatus.running)}
    return render(request, "jobs/detail.html", context, partial="jobs/_progress.html")


@router.post("/jobs/{job_id}/cancel")
def cancel_job(request: Request, session: SessionDep, job_id: IdPath) -> RedirectResponse:
    try:
        request_cancel(session.get_bind(), job_id)  # type: ignore[arg-type]
    except LookupError:
        raise HTTPException(404, f"no job {job_id}") from None
    return redirect(request, f"/jobs/{job_id}")
