"""The case browser and the case page."""


from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.cases.detail import get_case
from app.cases.listing import browser_view, neighbours
from app.web.deps import (
    CursorQuery,
    IdPath,
    IdQuery,
    PageFilterDep,
    SessionDep,
    SettingsDep,
)
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
