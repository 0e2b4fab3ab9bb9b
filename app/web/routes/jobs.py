"""Admins: regenerate selected cases from the browser, and follow each job live."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import FormData

from app.errors import Invalid
from app.job_models import JobStatus
from app.jobs import (
    DEFAULT_MODELS,
    JobForm,
    JobOptions,
    available,
    create_job,
    get_job,
    job_batches,
    job_estimate,
    job_runs,
    job_selection,
    job_summary,
    recent_jobs,
    request_cancel,
    start_sending,
)
from app.judges.candidates import candidate_names
from app.studies.worklist import get_study
from app.web.deps import CaseFilterDep, IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
TaskIds = Annotated[list[int] | None, Query(alias="task")]


def _form_page(request: Request, session: SessionDep, case_filter: CaseFilterDep,
               chosen: list[int], everything: bool, typed: dict[str, Any],
               errors: dict[str, str]) -> HTMLResponse:
    backends = available()
    options = JobOptions(backend=backends[0])
    context = {"task_ids": [] if everything else chosen, "everything": everything,
               "count": len(chosen),
               "filter": case_filter, "backends": backends,
               "options": options, "models": DEFAULT_MODELS, "typed": typed, "errors": errors,
               "estimate": job_estimate(session, chosen, options)}
    return render(request, "jobs/new.html", context, status_code=422 if errors else 200)


@router.get("/jobs/new", response_class=HTMLResponse)
def new_job(request: Request, session: SessionDep, case_filter: CaseFilterDep,
            task: TaskIds = None,
            everything: Annotated[bool, Query(alias="all")] = False) -> HTMLResponse:
    chosen = job_selection(session, case_filter, task, everything)
    return _form_page(request, session, case_filter, chosen, everything, {}, {})


@router.post("/jobs/estimate", response_class=HTMLResponse)
def estimate_job(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                 form: Annotated[JobForm, Form()]) -> HTMLResponse:
    """The estimate again, for the form's current values (the form asks on every change).
    Posted like the form itself: the filter is in the query, where "rounds" is the filter's
    rounds, and the job's own fields are in the body."""
    chosen = job_selection(session, case_filter, form.task, form.everything)
    options = form.options(available())
    return render(request, "jobs/_estimate.html",
                  {"estimate": job_estimate(session, chosen, options), "options": options})


@router.post("/jobs")
def start_job(request: Request, session: SessionDep, admin: AdminUser, case_filter: CaseFilterDep,
              settings: SettingsDep,
              posted_fields: Annotated[FormData, Depends(posted_form)]) -> Response:
    posted = read_form(posted_fields, JobForm)
    form = posted.value
    everything = posted_fields.get("everything") == "true"
    tasks = [int(str(t)) for t in posted_fields.getlist("task") if str(t).isdigit()] or None
    if form is not None:
        try:
            options = form.options(available()).within(settings)
            chosen = job_selection(session, case_filter, form.task, form.everything)
            job_id = create_job(session.get_bind(), chosen, options, admin.id)  # type: ignore[arg-type]
            return redirect(request, f"/jobs/{job_id}")
        except Invalid as error:
            posted = posted.refused(error)
    # The selection itself must stand; if it does not, there is no form to show again.
    chosen = job_selection(session, case_filter, tasks, everything)
    return _form_page(request, session, case_filter, chosen, everything, posted.fields, posted.errors)


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(request: Request, session: SessionDep) -> HTMLResponse:
    return render(request, "jobs/list.html", {"jobs": recent_jobs(session)})


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_page(request: Request, session: SessionDep, job_id: IdPath) -> HTMLResponse:
    job = get_job(session, job_id)
    options = JobOptions.from_json(job.options)
    named = [i for i in (options.candidate_id, options.judge_candidate_id) if i is not None]
    context = {"job": job_summary(job), "runs": job_runs(session, job_id),
               "batches": job_batches(session, job_id),
               "live": job.status in (JobStatus.queued, JobStatus.running),
               "names": candidate_names(session, named), "reference": options.reference}
    return render(request, "jobs/detail.html", context, partial="jobs/_progress.html")


@router.post("/studies/{study_id}/dicomweb")
def send_study_to_dicomweb(request: Request, session: SessionDep, settings: SettingsDep,
                           admin: AdminUser, study_id: IdPath) -> RedirectResponse:
    """A job that sends the study's cases to the configured DICOMweb server."""
    get_study(session, study_id)  # a 404 for a study that does not exist
    job_id = start_sending(request.app.state.engine, study_id, settings, admin.id)
    return redirect(request, f"/jobs/{job_id}")


@router.post("/jobs/{job_id}/cancel")
def cancel_job(request: Request, session: SessionDep, job_id: IdPath) -> RedirectResponse:
    request_cancel(session.get_bind(), job_id)  # type: ignore[arg-type]
    return redirect(request, f"/jobs/{job_id}")
