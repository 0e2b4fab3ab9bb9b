"""Readers: their studies, the blinded reading screen, answers, drafts, undo, images."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import FormData

from app.images.files import ImageSize
from app.studies.adjudication import studies_to_adjudicate
from app.studies.answers import FAILURE_TAGS, AnswerIn, DraftIn, save_draft, submit_answer, undo_last
from app.studies.images import item_diff, item_image
from app.studies.models import Assignment, Study
from app.studies.viewer_tools import require_tool
from app.studies.worklist import (
    get_assignment,
    get_study,
    next_open,
    read_for_reader,
    read_view,
    studies_of,
)
from app.web.deps import IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.routes.images import diff_response, image_response
from app.web.security import CurrentUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
SequencePath = IdPath
# Item uids are 24 hex characters (secrets.token_hex(12)).
IdlessUid = Path(pattern=r"^[0-9a-f]{24}$")


@router.get("/read", response_class=HTMLResponse)
def my_studies(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    return render(request, "studies/reading/list.html", {"studies": studies_of(session, user),
                                                 "adjudicating": studies_to_adjudicate(session, user)})


@router.get("/read/{study_id}")
def continue_study(request: Request, session: SessionDep, user: CurrentUser,
                   study_id: IdPath) -> RedirectResponse:
    study = get_study(session, study_id)
    get_assignment(session, study, user, 1)  # 403 for a study that is not theirs
    following = next_open(session, study, user)
    target = f"/read/{study_id}/{following.sequence}" if following else f"/read?done={study_id}"
    return redirect(request, target)


# Registered before the /{sequence} routes, which would take 'undo' for a number.
@router.post("/read/{study_id}/undo")
def undo(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath) -> RedirectResponse:
    study = get_study(session, study_id)
    get_assignment(session, study, user, 1)
    assignment = undo_last(session, study, user.id or 0)
    target = f"/read/{study_id}/{assignment.sequence}" if assignment else f"/read/{study_id}"
    return redirect(request, target)


@router.get("/read/{study_id}/{sequence}", response_class=HTMLResponse)
def reading_screen(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
                   sequence: SequencePath) -> HTMLResponse:
    study = get_study(session, study_id)
    view = read_view(session, study, user, get_assignment(session, study, user, sequence))
    return render(request, "studies/reading/read.html", {"view": view, "tags": FAILURE_TAGS, "errors": {}})


@router.post("/read/{study_id}/{sequence}", response_class=HTMLResponse)
def submit(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
           sequence: SequencePath, form: Annotated[FormData, Depends(posted_form)]) -> Response:
    # Sync: the body is read by posted_form first, so no pooled connection waits on a client.
    study = get_study(session, study_id)
    assignment = get_assignment(session, study, user, sequence)
    posted = read_form(form, AnswerIn)
    if posted.value is None:
        view = read_view(session, study, user, assignment)
        view.draft = posted.fields
        return render(request, "studies/reading/read.html", {"view": view, "tags": FAILURE_TAGS,
                                                     "errors": posted.errors}, status_code=422)
    submit_answer(session, study, assignment, posted.value)
    if study.reveal == "after_submit":
        return redirect(request, f"/read/{study_id}/{sequence}")
    return redirect(request, f"/read/{study_id}")


@router.put("/read/{study_id}/{sequence}/draft", status_code=204)
def put_draft(session: SessionDep, user: CurrentUser, study_id: IdPath, sequence: SequencePath,
              payload: Annotated[DraftIn, Body()]) -> Response:
    study = get_study(session, study_id)
    save_draft(session, study, get_assignment(session, study, user, sequence), payload)
    return Response(status_code=204)


@router.get("/read/{study_id}/image/{uid}/{which}")
def reading_image(request: Request, session: SessionDep, settings: SettingsDep,
                        user: CurrentUser, study_id: IdPath, uid: Annotated[str, IdlessUid],
                        which: Literal["original", "edit"],
                        size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    study = get_study(session, study_id)
    assignment, item = read_for_reader(session, study, user, uid)
    return image_response(request, item_image(session, item, which), size,
                          settings.resolved_cache_dir(), blind=_blind(study, assignment))


@router.get("/read/{study_id}/diff/{uid}")
def reading_diff(request: Request, session: SessionDep, settings: SettingsDep,
                 user: CurrentUser, study_id: IdPath, uid: Annotated[str, IdlessUid],
                 size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    """The difference map by the item's uid: like the images, it names no attempt."""
    study = get_study(session, study_id)
    require_tool(study, "difference")
    assignment, item = read_for_reader(session, study, user, uid)
    known = item_diff(session, item, size, settings.resolved_cache_dir())
    return diff_response(request, *known, blind=_blind(study, assignment))


def _blind(study: Study, assignment: Assignment) -> str:
    """What a blinded image's ETag is made from besides the file: the study, the reader and
    the read, so a tag seen anywhere else (a verdict revealed in another study, another
    reader's cache, the first read of a repeat) never matches."""
    return f"{study.id}:{study.order_secret}:{assignment.user_id}:{assignment.uid}"
