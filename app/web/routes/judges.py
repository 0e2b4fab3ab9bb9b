"""Admins: the judge observatory. Candidate judges (their prompts edited here, with a diff
against the judge of record's and a version), scoring them on a locked study as a job, and the
leaderboard."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from starlette.datastructures import FormData

from app.agreement.leaderboard import QUESTIONS, RECORD
from app.errors import Invalid
from app.jobs import regenerate_let_through, start_drift_check, start_scoring
from app.judges.candidates import (
    OFFLINE_BIASES,
    PANEL_RULES,
    CandidatePlan,
    candidates,
    create_candidate,
    create_panel,
    default_template,
    diff_from_default,
    get_candidate,
    template_hash,
)
from app.judges.drift import checks
from app.judges.follow_up import create_follow_up
from app.judges.promotion import promote, promoted
from app.judges.scoring import leaderboard, outlook, reference_studies, reference_study
from app.judges.targets import targets_of
from app.models import MAX_DB_ID
from app.web.deps import IdPath, QuestionQuery, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
StudyQuery = Annotated[int, Query(ge=1, le=MAX_DB_ID)]


def _posted_id(value: object, field: str, wanted: str) -> int:
    """A database id from a form; Invalid (422) for anything else, an id past the
    database's range included (it would fail in the driver, not here)."""
    try:
        found = int(str(value))
    except ValueError:
        found = 0
    if not 1 <= found <= MAX_DB_ID:
        raise Invalid(f"choose {wanted}", field)
    return found


class CandidateForm(BaseModel):
    name: str = Field(max_length=100)
    backend: Literal["offline", "gemini"] = "offline"
    model: str = Field(max_length=100)
    template: str = Field(max_length=20_000)
    repeats: int = Field(default=1, ge=1, le=5)
    thinking_budget: int | None = None
    temperature: float | None = None
    bias: str = Field(default="", max_length=16)
    note: str = Field(default="", max_length=2000)


def _index(session: SessionDep, typed: dict[str, Any] | None = None,
           errors: dict[str, str] | None = None) -> dict[str, Any]:
    template = (typed or {}).get("template") or default_template()
    return {"candidates": candidates(session), "studies": reference_studies(session),
            "promoted": promoted(session),
            "typed": typed or {"backend": "offline", "model": "offline-heuristic-1", "repeats": 1},
            "template": template, "diff": diff_from_default(template),
            "hash": template_hash(template), "default_hash": template_hash(default_template()),
            "biases": OFFLINE_BIASES, "errors": errors or {}, "rules": PANEL_RULES,
            "panel": {"rule": "majority", "members": []}, "panel_errors": {}}


@router.get("/judges", response_class=HTMLResponse)
def judges_page(request: Request, session: SessionDep) -> HTMLResponse:
    return render(request, "judges/index.html", _index(session))


@router.post("/judges", response_class=HTMLResponse)
def add_candidate(request: Request, session: SessionDep, admin: AdminUser,
                  form: Annotated[FormData, Depends(posted_form)]) -> Response:
    posted = read_form(form, CandidateForm)
    if posted.value is not None:
        chosen = posted.value
        try:
            made = create_candidate(session, CandidatePlan(
                name=chosen.name, backend=chosen.backend, model=chosen.model,
                template=chosen.template, repeats=chosen.repeats,
                thinking_budget=chosen.thinking_budget, temperature=chosen.temperature,
                bias=chosen.bias or None, note=chosen.note), admin.id)
            return redirect(request, f"/judges/{made.id}")
        except Invalid as error:
            session.rollback()
            posted = posted.refused(error)
    return render(request, "judges/index.html", _index(session, dict(posted.fields), posted.errors),
                  status_code=422)


@router.post("/judges/panels", response_class=HTMLResponse)
def add_panel(request: Request, session: SessionDep, admin: AdminUser,
              form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """A panel of candidates: a candidate itself, scored from its members' answers."""
    name, rule = str(form.get("panel_name", "")), str(form.get("rule", ""))
    try:
        members = [_posted_id(m, "members", "candidates from the list") for m in form.getlist("members")]
        made = create_panel(session, name, members, rule, admin.id)
        return redirect(request, f"/judges/{made.id}")
    except Invalid as error:
        session.rollback()
        typed = {"panel_name": name, "rule": rule,
                 "members": [int(m) for m in map(str, form.getlist("members")) if m.isdigit()]}
        field = {"name": "panel_name"}.get(error.field or "", error.field or "form")
        return render(request, "judges/index.html",
                      _index(session) | {"panel": typed, "panel_errors": {field: str(error)}},
                      status_code=422)


@router.post("/judges/diff", response_class=HTMLResponse)
def template_diff(request: Request, form: Annotated[FormData, Depends(posted_form)]) -> HTMLResponse:
    """The diff and hash of the template being typed, redrawn beside the form as it changes."""
    template = str(form.get("template", ""))[:20_000]
    return render(request, "judges/_diff.html", {
        "diff": diff_from_default(template), "hash": template_hash(template),
        "default_hash": template_hash(default_template())})


@router.post("/judges/follow-up")
def make_follow_up(request: Request, session: SessionDep, admin: AdminUser,
                   form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """A study of a finished targeted regeneration's edits, read by the source study's
    readers, whose agreement page shows before and after."""
    job_id = _posted_id(form.get("job"), "job", "the regeneration job to follow up")
    name = str(form.get("name", "")).strip() or f"follow-up of job {job_id}"
    study = create_follow_up(session, job_id, name, None, admin)
    return redirect(request, f"/studies/{study.id}")


@router.get("/judges/leaderboard", response_class=HTMLResponse)
def leaderboard_page(request: Request, session: SessionDep,
                     study: StudyQuery,
                     question: QuestionQuery = None) -> HTMLResponse:
    found, data, settled = reference_study(session, study)
    shown = question or "overall"
    # The question shown, alone: each is a fifth of the work, and the tabs ask for the rest.
    board = leaderboard(session, study, questions=(shown,), loaded=(data, settled))[shown]
    return render(request, "judges/leaderboard.html", {
        "study": found, "questions": QUESTIONS, "board": board, "question": shown,
        "record": RECORD, "targets": targets_of(study, data, settled), "promoted": promoted(session),
        "drift": checks(session, study, loaded=(data, settled))})


@router.post("/judges/leaderboard/drift")
def drift_check(request: Request, session: SessionDep, admin: AdminUser, settings: SettingsDep,
                form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """Ask the judge of record again on the study's edits (a scoring job)."""
    study = _posted_id(form.get("study"), "study",
                       "the locked study to ask the judge of record again on")
    reference_study(session, study)  # 409 before anything is made
    job_id = start_drift_check(request.app.state.engine, study, settings, admin)
    return redirect(request, f"/jobs/{job_id}")


@router.post("/judges/leaderboard/regenerate")
def regenerate_targets(request: Request, session: SessionDep, admin: AdminUser,
                       settings: SettingsDep,
                       form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """Regenerate the edits the study's readers rejected and the judge accepted."""
    study = _posted_id(form.get("study"), "study",
                       "the locked study whose disagreements to regenerate")
    job_id = regenerate_let_through(request.app.state.engine, study, settings, admin.id)
    return redirect(request, f"/jobs/{job_id}")


@router.post("/judges/default")
def promote_default(request: Request, session: SessionDep, admin: AdminUser,
                    form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """New jobs are judged by the judge of record's own prompt again."""
    promote(session, None, admin)
    return redirect(request, "/judges")


@router.get("/judges/{candidate_id}", response_class=HTMLResponse)
def candidate_page(request: Request, session: SessionDep, candidate_id: IdPath) -> HTMLResponse:
    candidate = get_candidate(session, candidate_id)
    return render(request, "judges/detail.html", {
        "candidate": candidate, "promoted": promoted(session),
        "members": [get_candidate(session, m) for m in candidate.member_ids],
        "diff": diff_from_default(candidate.template),
        "hash": template_hash(candidate.template),
        "default_hash": template_hash(default_template()),
        "outlooks": [] if candidate.members else [
            outlook(session, candidate, s) for s in reference_studies(session)]})


@router.post("/judges/{candidate_id}/promote")
def promote_candidate(request: Request, session: SessionDep, admin: AdminUser,
                      candidate_id: IdPath,
                      form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """The candidate judges every new regeneration and re-judging job from now on."""
    promote(session, candidate_id, admin)
    return redirect(request, f"/judges/{candidate_id}")


@router.post("/judges/{candidate_id}/score")
def score_candidate(request: Request, session: SessionDep, admin: AdminUser, settings: SettingsDep,
                    candidate_id: IdPath,
                    form: Annotated[FormData, Depends(posted_form)]) -> Response:
    study = _posted_id(form.get("study"), "study", "a locked study to score the candidate on")
    get_candidate(session, candidate_id)
    engine = request.app.state.engine
    job_id = start_scoring(engine, candidate_id, study, settings, admin.id)
    return redirect(request, f"/jobs/{job_id}")
