"""Admins: a study's agreement figures as a page, a JSON report and CSV tables."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from pydantic import Field

from app.agreement.reads import QUESTIONS
from app.agreement.report import Slice
from app.agreement.service import report_for
from app.agreement.tables import TABLES, iter_csv, rows
from app.deps import DiseaseName, IdPath, SessionDep
from app.models import Direction, Modality
from app.web import render
from app.worklist import get_study

router = APIRouter(include_in_schema=False)
RoundNumber = Annotated[int, Field(ge=1, le=1000)]


def case_slice(
    modality: Annotated[list[Modality] | None, Query()] = None,
    disease: Annotated[list[DiseaseName] | None, Query()] = None,
    direction: Annotated[list[Direction] | None, Query()] = None,
    round: Annotated[list[RoundNumber] | None, Query()] = None,
) -> Slice:
    return Slice(modality=tuple(m.value for m in modality or ()), disease=tuple(disease or ()),
                 direction=tuple(d.value for d in direction or ()), round=tuple(round or ()))


SliceDep = Annotated[Slice, Depends(case_slice)]


@router.get("/studies/{study_id}/agreement", response_class=HTMLResponse)
def agreement_page(request: Request, session: SessionDep, study_id: IdPath,
                   scope: SliceDep) -> HTMLResponse:
    study = get_study(session, study_id)
    data, report, charts = report_for(session, study, scope)
    choices = {"modality": sorted({c.modality for c in data.cases}),
               "disease": sorted({c.disease for c in data.cases}),
               "direction": sorted({c.direction for c in data.cases}),
               "round": sorted({c.round for c in data.cases})}
    context: dict[str, Any] = {"study": study, "report": report, "charts": charts,
                               "choices": choices, "scope": scope, "questions": QUESTIONS,
                               "tables": TABLES, "query": request.url.query}
    return render(request, "agreement/study.html", context)


@router.get("/studies/{study_id}/agreement.json")
def agreement_json(session: SessionDep, study_id: IdPath, scope: SliceDep) -> JSONResponse:
    study = get_study(session, study_id)
    _, report, _ = report_for(session, study, scope)
    return JSONResponse({"study": {"id": study.id, "name": study.name, "status": study.status},
                         **report})


@router.get("/studies/{study_id}/agreement/{table}.csv")
def agreement_csv(session: SessionDep, study_id: IdPath, table: str,
                  scope: SliceDep) -> StreamingResponse:
    if table not in TABLES:
        raise HTTPException(404, f"no table {table!r}; tables: {', '.join(TABLES)}")
    study = get_study(session, study_id)
    _, report, _ = report_for(session, study, scope)
    filename = f"study-{study_id}-{table}.csv"
    return StreamingResponse(iter_csv(rows(report, table)), media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})
