"""The case browser, the case page, and the case as DICOM."""

import shutil
import tempfile
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.background import BackgroundTask

from app.cases.detail import get_case
from app.cases.listing import browser_view, neighbours
from app.dicom.export import zipped_dicom
from app.dicom.selection import DicomSelection
from app.dicom.uids import Uids
from app.web.deps import (
    CursorQuery,
    IdPath,
    IdQuery,
    PageFilterDep,
    SessionDep,
    SettingsDep,
)
from app.web.security import AdminUser
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/cases", response_class=HTMLResponse)
def cases_page(
    request: Request, session: SessionDep, settings: SettingsDep, given: PageFilterDep,
    after: CursorQuery = None, before: CursorQuery = None,
) -> HTMLResponse:
    view = browser_view(session, given.filter, limit=settings.page_size, after=after,
                        before=before)
    context = {"filter": view.filter, "page": view.page, "facets": view.facets,
               "ignored": given.ignored}
    return render(request, "cases/list.html", context, partial="cases/_browser.html")


@router.get("/cases/{case_id}/dicom.zip", responses={
    200: {"content": {"application/zip": {}}, "description": "The case as DICOM"}})
def case_dicom(session: SessionDep, settings: SettingsDep, admin: AdminUser, request: Request,
               case_id: IdPath) -> Response:
    """The original and every edit of the case's latest run as DICOM, with a report per edit."""
    get_case(session, case_id, None)  # a 404 for a case that does not exist
    scratch = Path(tempfile.mkdtemp(prefix="dicom-"))
    try:
        zipped_dicom(request.app.state.engine, scratch / "case.zip", DicomSelection(task_ids=(case_id,)),
                     Uids(settings.dicom_uid_root), actor=admin.name)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return FileResponse(scratch / "case.zip", media_type="application/zip",
                        filename=f"case-{case_id}-dicom.zip",
                        background=BackgroundTask(shutil.rmtree, scratch, ignore_errors=True))


@router.get("/cases/{case_id}", response_class=HTMLResponse)
def case_page(
    request: Request, session: SessionDep, given: PageFilterDep,
    case_id: IdPath, run: IdQuery = None,
) -> HTMLResponse:
    case = get_case(session, case_id, run)
    prev_id, next_id = neighbours(session, given.filter, case_id)
    context = {"case": case, "filter": given.filter, "prev_id": prev_id, "next_id": next_id,
               "ignored": given.ignored}
    return render(request, "cases/detail.html", context)
