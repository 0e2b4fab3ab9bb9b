"""Admins: the imported data set in the paper's terms, beside the paper's figures."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, StreamingResponse

from app.csv_cells import iter_dict_csv
from app.overview import tables as overview
from app.overview.report import TABLES, overview_charts, overview_figures, overview_table
from app.web.deps import SessionDep
from app.web.json_response import StrictJSONResponse
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/overview", response_class=HTMLResponse)
def overview_page(request: Request, session: SessionDep) -> HTMLResponse:
    figures = overview_figures(session)
    context = {"figures": figures, "tables": TABLES,
               "consistency": figures["judge_self_consistency"],
               "paper_rounds": overview.PAPER_ROUNDS}
    return render(request, "overview/index.html", context)


@router.get("/overview/charts", response_class=HTMLResponse)
def charts_fragment(request: Request, session: SessionDep) -> HTMLResponse:
    """The charts as a fragment, fetched by the page once its tables are shown."""
    charts = overview_charts(session)
    return render(request, "overview/_charts.html", {"charts": charts})


@router.get("/overview.json")
def overview_json(session: SessionDep) -> StrictJSONResponse:
    figures = {k: v for k, v in overview_figures(session).items() if k != "rounds_by_number"}
    return StrictJSONResponse({**figures,
                         "paper": {"pass_rate": overview.PAPER_PASS_RATE,
                                   "rounds_to_success": overview.PAPER_ROUNDS,
                                   "self_consistency_identical": 0.872}})


@router.get("/overview/{table}.csv")
def overview_csv(session: SessionDep, table: str) -> StreamingResponse:
    return StreamingResponse(iter_dict_csv(overview_table(session, table)), media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{table}.csv"'})
