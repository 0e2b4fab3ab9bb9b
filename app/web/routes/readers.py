"""Admins: a study's checks on its readers (accuracy, fatigue, calibration, pauses), resuming
a paused reader, the per-reader CSV and the known-answer reads kept apart."""

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from pydantic import BaseModel, Field
from starlette.datastructures import FormData

from app.accounts.users import reader_accounts
from app.background import run_in_background
from app.errors import Invalid
from app.models import MAX_DB_ID
from app.readers.checks import iter_readers_csv, reader_checks
from app.readers.pause import resume
from app.readers.settled import mark, retire, settle_all
from app.studies.export import iter_answer_csv
from app.studies.known_answers import pool_size, settled_pool
from app.studies.practice import create_practice
from app.studies.previews import warm_previews
from app.studies.worklist import get_study, study_reader
from app.web.deps import IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import csv_download, redirect, render

router = APIRouter(include_in_schema=False)


@router.get("/studies/{study_id}/readers", response_class=HTMLResponse)
def readers_page(request: Request, session: SessionDep, study_id: IdPath) -> HTMLResponse:
    study = get_study(session, study_id)
    return render(request, "studies/readers.html",
                  {"study": study, "checks": reader_checks(session, study)})


@router.post("/studies/{study_id}/readers/{user_id}/resume")
def resume_reader(request: Request, session: SessionDep, admin: AdminUser, study_id: IdPath,
                  user_id: IdPath, note: Annotated[str, Form(max_length=2000)] = "") -> RedirectResponse:
    study = get_study(session, study_id)
    user = study_reader(session, study, user_id)
    resume(session, study, user.id or 0, admin, note)
    return redirect(request, f"/studies/{study_id}?saved=resumed-{user.id}#reader-checks")


@router.get("/studies/{study_id}/readers.csv")
def export_readers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return csv_download(iter_readers_csv(session, study), f"study-{study_id}-readers.csv")


@router.get("/studies/{study_id}/known-answers.csv")
def export_known_answers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return csv_download(iter_answer_csv(session, study, known=True), f"study-{study_id}-known-answers.csv")


class PracticeForm(BaseModel):
    name: str = Field(max_length=200)
    cases: int = Field(20, ge=0, le=100_000)
    readers: list[Annotated[int, Field(ge=1, le=MAX_DB_ID)]] = Field([], max_length=1000)
    seed: int = Field(42, ge=0, le=2**31 - 1)


def _practice_form(request: Request, session: SessionDep, form: dict[str, object],
                   errors: dict[str, str], status_code: int = 200) -> HTMLResponse:
    return render(request, "studies/new_practice.html",
                  {"form": form, "errors": errors, "readers": reader_accounts(session),
                   "known_pool": pool_size(session)}, status_code=status_code)


@router.get("/studies/new/practice", response_class=HTMLResponse)
def new_practice_form(request: Request, session: SessionDep) -> HTMLResponse:
    return _practice_form(request, session, {"cases": 20, "seed": 42, "readers": []}, {})


@router.post("/studies/practice", response_class=HTMLResponse)
def create_practice_route(request: Request, session: SessionDep, admin: AdminUser,
                          settings: SettingsDep,
                          fields: Annotated[FormData, Depends(posted_form)]) -> Response:
    posted = read_form(fields, PracticeForm)
    if posted.value is not None:
        try:
            study = create_practice(session, name=posted.value.name, cases=posted.value.cases,
                                    reader_ids=posted.value.readers, created_by=admin,
                                    seed=posted.value.seed)
        except Invalid as error:
            session.rollback()
            posted = posted.refused(error)
        else:
            run_in_background(("prepare", study.id), warm_previews, request.app.state.engine,
                              study.id, settings.resolved_cache_dir())
            return redirect(request, f"/studies/{study.id}")
    return _practice_form(request, session, posted.fields, posted.errors, status_code=422)


@router.get("/known-answers", response_class=HTMLResponse)
def known_answers_page(request: Request, session: SessionDep,
                       attempt: Annotated[int | None, Query(ge=1, le=MAX_DB_ID)] = None,
                       saved: Annotated[str, Query(max_length=40)] = "") -> HTMLResponse:
    return _pool_page(request, session, {"attempt": attempt or ""}, {}, saved)


def _pool_page(request: Request, session: SessionDep, form: dict[str, object],
               errors: dict[str, str], saved: str = "", status_code: int = 200) -> HTMLResponse:
    return render(request, "studies/known_answers.html",
                  {"pool": settled_pool(session), "form": form, "errors": errors,
                   "saved": saved}, status_code=status_code)


class MarkForm(BaseModel):
    attempt: int = Field(ge=1, le=MAX_DB_ID)
    compliance: Literal["", "yes", "no"] = ""
    structure: Literal["", "yes", "no"] = ""
    realism: Literal["", "yes", "no"] = ""
    fidelity: Literal["", "yes", "no"] = ""
    overall: Literal["", "accept", "reject"] = ""
    note: str = Field("", max_length=2000)


@router.post("/known-answers", response_class=HTMLResponse)
def mark_known_answer(request: Request, session: SessionDep, admin: AdminUser,
                      fields: Annotated[FormData, Depends(posted_form)]) -> Response:
    posted = read_form(fields, MarkForm)
    if posted.value is not None:
        answers = posted.value.model_dump(exclude={"attempt", "note"})
        try:
            mark(session, posted.value.attempt, answers, admin, posted.value.note)
        except Invalid as error:
            session.rollback()
            posted = posted.refused(error)
        else:
            return redirect(request, "/known-answers?saved=marked#pool")
    return _pool_page(request, session, posted.fields, posted.errors, status_code=422)


@router.post("/known-answers/collect")
def collect_known_answers(request: Request, session: SessionDep) -> RedirectResponse:
    added = settle_all(session)
    return redirect(request, f"/known-answers?saved=collected-{added}#pool")


@router.post("/known-answers/{known_id}/retire")
def retire_known_answer(request: Request, session: SessionDep, known_id: IdPath) -> RedirectResponse:
    retire(session, known_id)
    return redirect(request, "/known-answers?saved=retired#pool")
