"""Admins: the whole data set's quality, from a study's reads and the judge's verdicts."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData

from app.accounts.users import reader_accounts
from app.background import run_in_background
from app.errors import Invalid
from app.quality.follow_up import (
    FollowUpForm,
    create_follow_up,
    follow_up_defaults,
    follow_up_parts,
)
from app.quality.report import (
    DEFAULT_TARGET,
    METHOD,
    MINIMUM,
    ORDER,
    TARGETS,
    checked_target,
    quality_report,
    target_of,
)
from app.studies.previews import warm_previews
from app.studies.worklist import get_study
from app.web.deps import IdQuery, QuestionQuery, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/api", tags=["quality"])

TargetQuery = Annotated[float | None, Query(
    ge=TARGETS[0] * 100, le=TARGETS[1] * 100,
    description="The planner's target half-width of the 95 % interval, in percentage points")]


@router.get("/quality", response_class=HTMLResponse)
def quality_page(request: Request, session: SessionDep, study: IdQuery = None,
                 target: str = "", question: str = "") -> HTMLResponse:
    # A bookmarked page with a bad value still shows, with the value dropped and said so.
    notices = []
    goal = target_of(target)
    if goal is None:
        notices.append(f"The target {target!r} was left out: it is a number of points between "
                       f"{TARGETS[0] * 100:g} and {TARGETS[1] * 100:g}.")
        goal = DEFAULT_TARGET
    if question and question not in ORDER:
        notices.append(f"The question {question!r} was left out: it is one of {', '.join(ORDER)}.")
        question = ""
    return render(request, "quality/index.html",
                  _context(session, study, goal, question) | {"notices": notices})


def _context(session: SessionDep, study: int | None, goal: float, question: str,
             follow_up: dict[str, Any] | None = None,
             errors: dict[str, str] | None = None) -> dict[str, Any]:
    # The skill-weighted line comes after the page, in its own request (quality_skill_weighted).
    report = quality_report(session, study, goal, weighted=False)
    shown = question or (report.study or {}).get("primary_question", "overall")
    widest = report.widest(shown)
    return {"report": report, "question": shown, "questions": ORDER, "target_points": goal * 100,
            "notices": [], "widest": widest, "method": METHOD, "minimum": MINIMUM,
            "readers": reader_accounts(session), "parts": follow_up_parts(report),
            "follow_up": follow_up or follow_up_defaults(report, widest, shown),
            "errors": errors or {}}


PopulationQuery = Annotated[Literal["accepted", "judged"], Query()]


@router.get("/quality/skill-weighted", response_class=HTMLResponse)
def quality_skill_weighted(request: Request, session: SessionDep, population: PopulationQuery,
                           study: IdQuery = None, target: str = "",
                           question: QuestionQuery = None) -> HTMLResponse:
    """The sensitivity table's skill-weighted row (a Dawid-Skene fit per question), a
    fragment fetched after the page: the fit takes seconds the page's figures need not wait for."""
    report = quality_report(session, study, target_of(target) or DEFAULT_TARGET)  # the page named a bad one
    found = next((p for p in report.populations if p.key == population), None)
    return render(request, "quality/_skill_weighted_row.html",
                  {"population": found, "question": question or "overall"})


@router.get("/quality/charts", response_class=HTMLResponse)
def quality_charts(request: Request, session: SessionDep, study: IdQuery = None,
                   target: TargetQuery = None) -> HTMLResponse:
    """The calibration charts, drawn after the page: the report is the page's (cached), and
    matplotlib's drawing stays out of the first view."""
    calibration = quality_report(session, study, checked_target(target)).calibration
    charts = calibration.charts() if calibration is not None and calibration.auc is not None else None
    reason = (calibration.reason if calibration else None) or "no read study yet"
    return render(request, "quality/_charts.html", {"charts": charts, "reason": reason})


@router.post("/quality/follow-up", response_class=HTMLResponse)
def make_follow_up(request: Request, session: SessionDep, admin: AdminUser,
                   settings: SettingsDep,
                   form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """A follow-up study of the planner's part, with the root study's design."""
    posted = read_form(form, FollowUpForm)
    if posted.value is not None:
        chosen = posted.value
        try:
            root = get_study(session, chosen.study)
            study = create_follow_up(session, root=root, part=chosen.chosen_part(),
                                     reads=chosen.reads, reader_ids=chosen.readers,
                                     name=chosen.name, created_by=admin)
            # As any new study: readers wait until every image is drawn.
            run_in_background(("prepare", study.id or 0), warm_previews, request.app.state.engine,
                              study.id or 0, settings.resolved_cache_dir())
            return redirect(request, f"/studies/{study.id}")
        except Invalid as error:
            session.rollback()
            posted = posted.refused(error)
    typed = {**posted.fields, "readers": [_as_id(r) for r in form.getlist("readers")]}
    root_id = posted.value.study if posted.value else _as_id(posted.fields.get("study"))
    context = _context(session, root_id, DEFAULT_TARGET, "", typed, posted.errors)
    return render(request, "quality/index.html", context, status_code=422)


def _as_id(value: object) -> int | None:
    text = str(value or "")
    return int(text) if text.isdigit() and 0 < int(text) < 2**31 else None


@api.get("/quality", summary="The data set's quality, corrected for the judge's errors")
def api_quality(session: SessionDep, study: IdQuery = None,
                target: TargetQuery = None) -> dict[str, Any]:
    """Per population and question: the judge's raw rate, the PPI++ estimate, the readers
    alone and the Rogan-Gladen correction, each with its 95 % interval, by modality, direction
    and disease, with the reads the planner asks for. ``reason`` says why there is no
    estimate (200, not an error) when no study can give one."""
    return quality_report(session, study, checked_target(target)).as_dict()
