"""Admins: a study's checks on its readers (accuracy, fatigue, calibration, pauses), resuming
a paused reader, the per-reader CSV and the known-answer reads kept apart."""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse

from app.readers.checks import iter_readers_csv, reader_checks
from app.readers.pause import resume
from app.studies.export import iter_answer_csv
from app.studies.worklist import get_study, study_reader
from app.web.deps import IdPath, SessionDep
from app.web.security import AdminUser
from app.web.templating import redirect, render

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


def _csv(rows: object, filename: str) -> StreamingResponse:
    return StreamingResponse(rows, media_type="text/csv",  # type: ignore[arg-type]
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/studies/{study_id}/readers.csv")
def export_readers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return _csv(iter_readers_csv(session, study), f"study-{study_id}-readers.csv")


@router.get("/studies/{study_id}/known-answers.csv")
def export_known_answers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return _csv(iter_answer_csv(session, study, known=True), f"study-{study_id}-known-answers.csv")
