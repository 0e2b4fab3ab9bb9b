"""Readers: their studies, the blinded reading screen, answers, drafts, undo, images."""

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlmodel import Session
from starlette.datastructures import FormData

from app.background import run_coalesced, run_in_background
from app.designs import design_of, more_coming, top_up
from app.errors import Conflict, Forbidden, NotFound
from app.images.files import ImageSize
from app.models import User
from app.readers.pause import NEUTRAL, active_pause, moves_the_test, reading_block, watch_reader
from app.readers.qualification import record_if_qualified, standings_of
from app.studies.adjudication import studies_to_adjudicate
from app.studies.answers import DraftIn, keep_as_draft, save_draft
from app.studies.images import item_diff, shown_image
from app.studies.instructions_seen import instructions_due
from app.studies.models import Assignment, Design, Study
from app.studies.previews import preparation, require_prepared
from app.studies.viewer_tools import require_tool
from app.studies.worklist import (
    get_assignment,
    get_study,
    next_open,
    read_for_reader,
    studies_of,
)
from app.web.deps import IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.routes.images import cached_response, image_response
from app.web.security import CurrentUser
from app.web.templating import redirect, render, root_path

router = APIRouter(include_in_schema=False)
SequencePath = IdPath
# Item uids are 24 hex characters (secrets.token_hex(12)).
IdlessUid = Path(pattern=r"^[0-9a-f]{24}$")


@router.get("/read", response_class=HTMLResponse)
def my_studies(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    studies = studies_of(session, user)
    return render(request, "studies/reading/list.html", {
        "studies": studies, "adjudicating": studies_to_adjudicate(session, user),
        "standings": standings_of(session, [s for s, _ in studies], user.id or 0),
        "preparing": {s.id: preparation(session, s) for s, _ in studies},
        "paused": {s.id for s, _ in studies if active_pause(session, s.id or 0, user.id or 0)}})


def _paused(request: Request, session: SessionDep, study: Study, user: CurrentUser,
            status_code: int = 200) -> HTMLResponse | None:
    """The page of a reader who may not read this study now, or None when they may: not yet
    qualified in the practice the study asks for, or paused (told in neutral words)."""
    blocked = reading_block(session, study, user.id or 0)
    if blocked is None:
        return None
    if blocked.pause is None:
        return render(request, "studies/reading/qualify.html",
                      {"study": study, "standing": blocked.standing, "practice": blocked.practice},
                      status_code=status_code)
    return render(request, "studies/reading/paused.html",
                  {"study": study, "pause": blocked.pause, "message": NEUTRAL},
                  status_code=status_code)


@router.get("/read/{study_id}", response_model=None)
def continue_study(request: Request, session: SessionDep, user: CurrentUser,
                   study_id: IdPath) -> Response:
    study = get_study(session, study_id)
    get_assignment(session, study, user, 1)  # 403 for a study that is not theirs
    require_prepared(session, study)
    if paused := _paused(request, session, study, user):
        return paused
    return redirect(request, _next_case(session, study, user))


def _next_case(session: Session, study: Study, user: User) -> str:
    following = next_open(session, study, user)
    if following is not None:
        return f"/read/{study.id}/{following.sequence}"
    return f"/read/{study.id}/more" if more_coming(session, study) else f"/read?done={study.id}"


# Registered before the /{sequence} routes, which would take 'more' for a number.
@router.get("/read/{study_id}/more", response_model=None)
def more_cases(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
               settings: SettingsDep) -> Response:
    """A reader who has read every case drawn so far of a study that draws more as reading
    goes: told that more are coming, and taken to the next as soon as it is placed (the page
    asks every few seconds; htmx follows the HX-Redirect)."""
    study = get_study(session, study_id)
    get_assignment(session, study, user, 1)
    require_prepared(session, study)
    if paused := _paused(request, session, study, user):
        return paused
    target = _next_case(session, study, user)
    if not target.endswith("/more"):
        if request.headers.get("HX-Request") == "true":
            return Response(status_code=204, headers={"HX-Redirect": root_path(request) + target})
        return redirect(request, target)
    # A list that ran dry asks for the batch again: the answer that asked last may have
    # found it not yet due.
    run_in_background(("top-up", study_id), top_up, request.app.state.engine, study_id,
                      settings.resolved_cache_dir())
    if request.headers.get("HX-Request") == "true":
        return Response(status_code=204)
    return render(request, "studies/reading/more.html", {"study": study})


# Registered before the /{sequence} routes, which would take 'undo' for a number.
@router.post("/read/{study_id}/undo", response_model=None)
def undo(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath) -> Response:
    study = get_study(session, study_id)
    get_assignment(session, study, user, 1)
    require_prepared(session, study)  # as every reading route: nothing before it opens
    if paused := _paused(request, session, study, user, status_code=409):
        return paused
    assignment = design_of(study).undo_last(session, study, user.id or 0)
    target = f"/read/{study_id}/{assignment.sequence}" if assignment else f"/read/{study_id}"
    return redirect(request, target)


@router.get("/read/{study_id}/{sequence}", response_class=HTMLResponse)
def reading_screen(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
                   sequence: SequencePath) -> HTMLResponse:
    study = get_study(session, study_id)
    assignment = get_assignment(session, study, user, sequence)
    require_prepared(session, study)
    if paused := _paused(request, session, study, user):
        return paused
    due = instructions_due(session, study, user.id or 0)
    design = design_of(study)
    return render(request, design.reading_template,
                  design.screen(session, study, user, assignment, instructions_due=due))


def _one_image(study: Study) -> bool:
    return Design(study.design).single_image


@router.post("/read/{study_id}/{sequence}", response_class=HTMLResponse)
def submit(request: Request, session: SessionDep, user: CurrentUser, study_id: IdPath,
           sequence: SequencePath, form: Annotated[FormData, Depends(posted_form)],
           settings: SettingsDep) -> Response:
    # Sync: the body is read by posted_form first, so no pooled connection waits on a client.
    study = get_study(session, study_id)
    assignment = get_assignment(session, study, user, sequence)
    require_prepared(session, study)
    design = design_of(study)
    posted = read_form(form, design.answer_model)
    if paused := _paused(request, session, study, user, status_code=409):
        # Not stored as an answer while paused, but kept: the reader finds it typed in again.
        if design.keeps_drafts:
            keep_as_draft(session, study, assignment, posted.fields)
        return paused
    if posted.value is None:
        errors = posted.errors or {"form": "the answer was not accepted"}
        return render(request, design.reading_template,
                      design.screen(session, study, user, assignment, typed=posted.fields,
                                    errors=errors), status_code=422)
    design.submit(session, study, assignment, posted.value)
    if study.practice:
        record_if_qualified(session, study, user.id or 0)
    # One check of this reader's own known-answer reads, off the request, at most one
    # pending per reader.
    if settings.reader_checks and moves_the_test(session, study, assignment):
        run_coalesced(("watch-reader", study_id, user.id), watch_reader,
                      request.app.state.engine, study_id, user.id)
    if Design(study.design).draws_in_batches:  # the next batch, before anyone's list runs dry
        run_in_background(("top-up", study_id), top_up, request.app.state.engine, study_id,
                          settings.resolved_cache_dir())
    # Straight to the next case, not through /read/{id}: a whole request fewer per answer
    # (its pause check is the case page's own).
    return redirect(request, design.after_submit(study, sequence) or _next_case(session, study, user))


@router.put("/read/{study_id}/{sequence}/draft", status_code=204)
def put_draft(session: SessionDep, user: CurrentUser, study_id: IdPath, sequence: SequencePath,
              payload: Annotated[DraftIn, Body()]) -> Response:
    study = get_study(session, study_id)
    assignment = get_assignment(session, study, user, sequence)
    require_prepared(session, study)
    if not design_of(study).keeps_drafts:
        raise Conflict("this study keeps no drafts: its answer is a few keys")
    save_draft(session, study, assignment, payload)
    return Response(status_code=204)


@router.get("/read/{study_id}/image/{uid}/{which}")
def reading_image(request: Request, session: SessionDep, settings: SettingsDep,
                        user: CurrentUser, study_id: IdPath, uid: Annotated[str, IdlessUid],
                        which: Literal["original", "edit", "left", "right"],
                        size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    study = get_study(session, study_id)
    require_prepared(session, study)
    design = design_of(study)
    if _one_image(study):  # /original and /edit would say what the case shows
        raise Forbidden("a real-or-edited case has one image, at its own address")
    if which not in design.images:
        raise NotFound("no such image in this study")
    assignment, item = read_for_reader(session, study, user, uid)
    return image_response(request, design.image(session, study, assignment, item, which), size,
                          settings.resolved_cache_dir(), blind=_blind(study, assignment))


@router.get("/read/{study_id}/diff/{uid}")
def reading_diff(request: Request, session: SessionDep, settings: SettingsDep,
                 user: CurrentUser, study_id: IdPath, uid: Annotated[str, IdlessUid],
                 size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    """The difference map by the item's uid: like the images, it names no attempt."""
    study = get_study(session, study_id)
    require_prepared(session, study)
    if "difference" not in design_of(study).tools:
        # A pairwise read's difference map would show which edit is the item's own.
        raise Forbidden("this study's design has no difference map")
    require_tool(study, "difference")
    assignment, item = read_for_reader(session, study, user, uid)
    known = item_diff(session, item, size, settings.resolved_cache_dir())
    return cached_response(request, *known, blind=_blind(study, assignment))


@router.get("/read/{study_id}/shown/{uid}")
def real_or_edited_image(request: Request, session: SessionDep, settings: SettingsDep,
                         user: CurrentUser, study_id: IdPath,
                         uid: Annotated[str, IdlessUid]) -> Response:
    """A real-or-edited case's one image, re-encoded blind: by the read's uid alone, so the
    address, the headers and the file say nothing of what it is."""
    study = get_study(session, study_id)
    require_prepared(session, study)
    if not _one_image(study):
        raise NotFound("no such image in this study")
    assignment, item = read_for_reader(session, study, user, uid)
    path, tag = shown_image(session, item, settings.resolved_cache_dir())
    return cached_response(request, path, tag, blind=_blind(study, assignment),
                           media_type="image/jpeg")


def _blind(study: Study, assignment: Assignment) -> str:
    """What a blinded image's ETag is made from besides the file: the study, the reader and
    the read, so a tag seen anywhere else (a verdict revealed in another study, another
    reader's cache, the first read of a repeat) never matches."""
    return f"{study.id}:{study.order_secret}:{assignment.user_id}:{assignment.uid}"
