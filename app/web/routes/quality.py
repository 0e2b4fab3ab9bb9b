"""Admins: the whole data set's quality, from a study's reads and the judge's verdicts."""

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.errors import Invalid
from app.quality.report import (
    DEFAULT_TARGET,
    METHOD,
    MINIMUM,
    ORDER,
    TARGETS,
    checked_target,
    quality_report,
)
from app.web.deps import IdQuery, SessionDep
from app.web.templating import render

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
    try:
        points = float(target) if target.strip() else None
        goal = checked_target(points)
    except (ValueError, Invalid):
        notices.append(f"The target {target!r} was left out: it is a number of points between "
                       f"{TARGETS[0] * 100:g} and {TARGETS[1] * 100:g}.")
        goal = DEFAULT_TARGET
    report = quality_report(session, study, goal)
    primary = (report.study or {}).get("primary_question", "overall")
    if question and question not in ORDER:
        notices.append(f"The question {question!r} was left out: it is one of {', '.join(ORDER)}.")
        question = ""
    shown = question or primary
    context: dict[str, Any] = {"report": report, "question": shown, "questions": ORDER,
                               "target_points": goal * 100, "notices": notices,
                               "widest": report.widest(shown), "method": METHOD,
                               "minimum": MINIMUM}
    return render(request, "quality/index.html", context)


@api.get("/quality", summary="The data set's quality, corrected for the judge's errors")
def api_quality(session: SessionDep, study: IdQuery = None,
                target: TargetQuery = None) -> dict[str, Any]:
    """Per population and question: the judge's raw rate, the PPI++ estimate, the readers
    alone and the Rogan-Gladen correction, each with its 95 % interval, by modality, direction
    and disease, with the reads the planner asks for. ``reason`` says why there is no
    estimate (200, not an error) when no study can give one."""
    return quality_report(session, study, checked_target(target)).as_dict()
