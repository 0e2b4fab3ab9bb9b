"""The JSON API: the same cases, runs, attempts and verdicts as the pages."""

from typing import Annotated

from fastapi import APIRouter, Query

from app.cases.detail import get_case
from app.cases.listing import list_cases
from app.web.deps import CaseFilterDep, CursorQuery, IdPath, IdQuery, SessionDep
from app.web.schemas import CaseList, CaseOut, case_out, case_summary

router = APIRouter(prefix="/api", tags=["cases"])


@router.get("/cases", response_model=CaseList, summary="List cases")
def api_list_cases(
    session: SessionDep, case_filter: CaseFilterDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    after: CursorQuery = None,
) -> CaseList:
    page = list_cases(session, case_filter, limit=limit, after=after)
    query = case_filter.query_string()
    next_url = None
    if page.next_after is not None:
        next_url = f"/api/cases?{query + '&' if query else ''}limit={limit}&after={page.next_after}"
    return CaseList(total=page.total, items=[case_summary(r) for r in page.items], next=next_url)


@router.get("/cases/{case_id}", response_model=CaseOut, summary="One case with its runs",
            responses={404: {"description": "No such case or run"}})
def api_get_case(
    session: SessionDep, case_id: IdPath,
    run: Annotated[IdQuery, Query(description="Show this run's rounds instead of the latest")] = None,
) -> CaseOut:
    return case_out(get_case(session, case_id, run))
