"""Admins: the judge observatory. Candidate judges (their prompts edited here, with a diff
against the judge of record's and a version), sentinel sets drawn from several locked studies,
scoring candidates on a reference as a job (interactively or through the Batch API), the
leaderboard, and drift checks on demand or on a schedule."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from starlette.datastructures import FormData

from app.agreement.alternative_annotator import EPSILON, parse_epsilon
from app.background import run_in_background
from app.errors import Conflict, Invalid
from app.jobs import regenerate_let_through, start_drift_check, start_scoring
from app.judges.board import forest_plot, leaderboard, weighted_board
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
from app.judges.leaderboard import QUESTIONS, RECORD
from app.judges.promotion import promote, promoted
from app.judges.reference import (
    Ref,
    SentinelPlan,
    create_sentinel,
    load_reference,
    sentinel_sizes,
    sentinels,
)
from app.judges.schedule import schedule_of, set_schedule, stop_schedule, watches
from app.judges.scoring import outlook, reference_studies
from app.judges.stand_in import stand_ins
from app.judges.targets import targets_of
from app.models import MAX_DB_ID
from app.studies.previews import warm_previews
from app.web.deps import IdPath, QuestionQuery, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
RefQuery = Annotated[int | None, Query(ge=1, le=MAX_DB_ID)]


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


def _posted_ref(form: FormData) -> Ref:
    """The reference a form names: a study, or a sentinel set."""
    if form.get("sentinel"):
        return Ref("sentinel", _posted_id(form.get("sentinel"), "sentinel", "a sentinel set"))
    return Ref("study", _posted_id(form.get("study"), "study", "a locked study or a sentinel set"))


class CandidateForm(BaseModel):
    name: str = Field(max_length=100)
    backend: Literal["offline", "gemini"] = "offline"
    model: str = Field(max_length=100)
    template: str = Field(max_length=20_000)
    repeats: int = Field(default=1, ge=1, le=5)
    # Gemini's own ranges (-1: the model decides); beyond them the API refuses the call, and
    # a number past 32 bits failed in PostgreSQL's column with a 500.
    thinking_budget: int | None = Field(default=None, ge=-1, le=32_768)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0, allow_inf_nan=False)
    bias: str = Field(default="", max_length=16)
    note: str = Field(default="", max_length=2000)


def _index(session: SessionDep, typed: dict[str, Any] | None = None,
           errors: dict[str, str] | None = None) -> dict[str, Any]:
    template = (typed or {}).get("template") or default_template()
    return {"candidates": candidates(session), "studies": reference_studies(session),
            "promoted": promoted(session), "sentinels": sentinels(session),
            "sentinel_sizes": sentinel_sizes(session), "watches": watches(session),
            "sentinel": {"per_study": "", "seed": 0, "studies": []}, "sentinel_errors": {},
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


@router.post("/judges/sentinels", response_class=HTMLResponse)
def add_sentinel(request: Request, session: SessionDep, admin: AdminUser,
                 form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """A sentinel set: a seeded sample of the settled edits of several locked studies."""
    name = str(form.get("sentinel_name", ""))[:200]
    per_study, seed = str(form.get("per_study", "")).strip(), str(form.get("seed", "0")).strip()
    chosen = [str(s) for s in form.getlist("studies")]
    try:
        if per_study and not per_study.isdigit():
            raise Invalid("edits per study is a whole number, or empty for every settled edit",
                          "per_study")
        if not seed.isdigit() or len(seed) > 9:
            raise Invalid("the seed is a whole number from 0 to 999,999,999", "seed")
        studies = [_posted_id(s, "studies", "locked studies from the list") for s in chosen]
        made = create_sentinel(session, SentinelPlan(
            name=name, study_ids=studies, per_study=int(per_study) if per_study else None,
            seed=int(seed)), admin.id)
        return redirect(request, f"/judges/leaderboard?sentinel={made.id}")
    except (Invalid, Conflict) as error:
        session.rollback()
        typed = {"sentinel_name": name, "per_study": per_study, "seed": seed,
                 "studies": [int(s) for s in chosen if s.isdigit() and len(s) < 12]}
        field = {"name": "sentinel_name"}.get(getattr(error, "field", None) or "",
                                              getattr(error, "field", None) or "studies")
        return render(request, "judges/index.html",
                      _index(session) | {"sentinel": typed, "sentinel_errors": {field: str(error)}},
                      status_code=422 if isinstance(error, Invalid) else 409)


@router.post("/judges/diff", response_class=HTMLResponse)
def template_diff(request: Request, form: Annotated[FormData, Depends(posted_form)]) -> HTMLResponse:
    """The diff and hash of the template being typed, redrawn beside the form as it changes."""
    template = str(form.get("template", ""))[:20_000]
    return render(request, "judges/_diff.html", {
        "diff": diff_from_default(template), "hash": template_hash(template),
        "default_hash": template_hash(default_template())})


@router.post("/judges/follow-up")
def make_follow_up(request: Request, session: SessionDep, admin: AdminUser,
                   settings: SettingsDep,
                   form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """A study of a finished targeted regeneration's edits, read by the source study's
    readers, whose agreement page shows before and after."""
    job_id = _posted_id(form.get("job"), "job", "the regeneration job to follow up")
    name = str(form.get("name", "")).strip() or f"follow-up of job {job_id}"
    study = create_follow_up(session, job_id, name, None, admin)
    # Readers wait until its images are drawn, after this answer is sent.
    run_in_background(("prepare", study.id or 0), warm_previews, request.app.state.engine,
                      study.id or 0, settings.resolved_cache_dir())
    return redirect(request, f"/studies/{study.id}")


@router.get("/judges/leaderboard", response_class=HTMLResponse)
def leaderboard_page(request: Request, session: SessionDep, study: RefQuery = None,
                     sentinel: RefQuery = None, question: QuestionQuery = None,
                     epsilon: Annotated[str | None, Query(max_length=40)] = None) -> HTMLResponse:
    if (study is None) == (sentinel is None):
        raise Invalid("name one reference: ?study=ID for a locked study, or ?sentinel=ID for "
                      "a sentinel set", "study")
    ref = Ref("study", study) if study is not None else Ref("sentinel", sentinel or 0)
    reference = load_reference(session, ref)
    shown = question or "overall"
    # The question shown, alone: each is a fifth of the work, and the tabs ask for the rest.
    board = leaderboard(session, ref, questions=(shown,), loaded=reference)[shown]
    epsilon_error = None
    try:
        chosen = parse_epsilon(epsilon)
    except Invalid as error:  # the page still shows, with the default and what was typed
        chosen, epsilon_error = EPSILON, str(error)
    return render(request, "judges/leaderboard.html", {
        "reference": reference, "questions": QUESTIONS, "board": board, "question": shown,
        "forest": forest_plot(board),
        "record": RECORD, "promoted": promoted(session),
        "targets": (targets_of(study, reference.data, reference.settled)
                    if study is not None else None),
        "drift": checks(session, ref, loaded=reference), "schedule": schedule_of(session, ref),
        "weighted": weighted_board(session, reference, shown),
        "stand_ins": stand_ins(session, reference, shown, chosen), "epsilon": epsilon,
        "epsilon_error": epsilon_error}, status_code=422 if epsilon_error else 200)


@router.post("/judges/leaderboard/drift")
def drift_check(request: Request, session: SessionDep, admin: AdminUser, settings: SettingsDep,
                form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """Ask the judge of record again on the reference's edits (a scoring job)."""
    ref = _posted_ref(form)
    job_id = start_drift_check(request.app.state.engine, ref, settings, admin)
    return redirect(request, f"/jobs/{job_id}")


@router.post("/judges/leaderboard/schedule")
def drift_schedule(request: Request, session: SessionDep, admin: AdminUser,
                   form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """Check the reference on a schedule (the worker starts each check), or stop doing so."""
    ref = _posted_ref(form)
    if form.get("stop"):
        stop_schedule(session, ref)
    else:
        hours = str(form.get("every_hours", "")).strip()
        if not hours.isdigit() or len(hours) > 6:
            raise Invalid("check every 1 to 8,760 hours (a whole number)", "every_hours")
        set_schedule(session, ref, int(hours), admin)
    return redirect(request, f"/judges/leaderboard?{ref.query}#drift")


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
            *(outlook(session, candidate, Ref("sentinel", t.id or 0), t.name)
              for t in sentinels(session)),
            *(outlook(session, candidate, Ref("study", s.id or 0), s.name)
              for s in reference_studies(session))]})


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
    ref = _posted_ref(form)
    mode = str(form.get("mode", "interactive"))
    get_candidate(session, candidate_id)
    engine = request.app.state.engine
    job_id = start_scoring(engine, candidate_id, ref, settings, admin.id, mode=mode)
    return redirect(request, f"/jobs/{job_id}")
