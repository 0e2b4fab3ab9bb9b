"""The adjudicator's screens: the tied cases, each with the earlier reads, and a decision."""

import secrets
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData

from app.agreement.reads import load
from app.designs import adjudication_screen, to_adjudicate
from app.images.files import ImageSize
from app.studies.adjudication import (
    DecisionIn,
    item_by_uid,
    require_adjudicator,
    studies_to_adjudicate,
    submit_decision,
)
from app.studies.images import item_diff, item_image
from app.studies.models import Study
from app.studies.viewer_tools import VIEWER_TOOLS, require_tool, tools_of
from app.studies.worklist import get_study
from app.web.deps import IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.routes.images import cached_response, image_response
from app.web.security import CurrentUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
Uid = Annotated[str, Path(pattern=r"^[0-9a-f]{24}$")]


@router.get("/adjudicate", response_class=HTMLResponse)
def my_adjudications(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    return render(request, "studies/adjudication/studies.html",
                  {"studies": studies_to_adjudicate(session, user)})


@router.get("/adjudicate/{study_id}", response_class=HTMLResponse)
def worklist(request: Request, session: SessionDep, user: CurrentUser,
             study_id: IdPath) -> HTMLResponse:
    study = get_study(session, study_id)
    require_adjudicator(session, study, user)
    return render(request, "studies/adjudication/worklist.html",
                  {"study": study, "cases": to_adjudicate(load(session, study))})


def _screen(request: Request, session: SessionDep, study_id: int, uid: str,
            errors: dict[str, str], status_code: int = 200,
            given: dict[str, Any] | None = None) -> HTMLResponse:
    study = get_study(session, study_id)
    view = adjudication_screen(session, study, uid)
    context = {"study": study, "uid": uid, "earlier": view.earlier, "decision": view.decision,
               "submission_id": secrets.token_urlsafe(18), "instruction": view.instruction,
               "modality": view.modality, "open_questions": view.open_questions,
               "given": given or view.given, "errors": errors,
               # The adjudicator reads under the study's image tools, like its readers.
               "tools": [t for t in VIEWER_TOOLS if t in tools_of(study)]}
    return render(request, "studies/adjudication/screen.html", context, status_code=status_code)


@router.get("/adjudicate/{study_id}/{uid}", response_class=HTMLResponse)
def screen(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
           uid: Uid) -> HTMLResponse:
    require_adjudicator(session, get_study(session, study_id), user)
    return _screen(request, session, study_id, uid, {})


@router.post("/adjudicate/{study_id}/{uid}", response_class=HTMLResponse)
def decide(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath, uid: Uid,
           form: Annotated[FormData, Depends(posted_form)]) -> Response:
    study = get_study(session, study_id)
    require_adjudicator(session, study, user)
    item = item_by_uid(session, study, uid)
    posted = read_form(form, DecisionIn)
    if posted.value is None:
        return _screen(request, session, study_id, uid, posted.errors, 422, posted.fields)
    submit_decision(session, study, item, user, posted.value)
    return redirect(request, f"/adjudicate/{study_id}")


@router.get("/adjudicate/{study_id}/image/{uid}/{which}")
def adjudication_image(session: SessionDep, settings: SettingsDep, user: CurrentUser,
                       request: Request, study_id: IdPath, uid: Uid,
                       which: Literal["original", "edit"],
                       size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    study = get_study(session, study_id)
    require_adjudicator(session, study, user)
    item = item_by_uid(session, study, uid)
    return image_response(request, item_image(session, item, which), size,
                          settings.resolved_cache_dir(), blind=_blind(study, user.id))


@router.get("/adjudicate/{study_id}/diff/{uid}")
def adjudication_diff(session: SessionDep, settings: SettingsDep, user: CurrentUser,
                      request: Request, study_id: IdPath, uid: Uid,
                      size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    study = get_study(session, study_id)
    require_adjudicator(session, study, user)
    require_tool(study, "difference")
    item = item_by_uid(session, study, uid)
    known = item_diff(session, item, size, settings.resolved_cache_dir())
    return cached_response(request, *known, blind=_blind(study, user.id))


def _blind(study: Study, user_id: int | None) -> str:
    """The adjudicator's ETags are their own to this study (app/web/routes/reading.py)."""
    return f"adjudicate:{study.id}:{study.order_secret}:{user_id}"
