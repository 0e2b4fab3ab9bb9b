"""Admins: the imported data set in the paper's terms, beside the paper's figures."""

import threading
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse

from app import overview
from app.agreement.charts import Point, interval_chart, rounds_chart
from app.agreement.consistency import judge_consistency
from app.agreement.stats import wilson
from app.agreement.tables import iter_csv
from app.deps import SessionDep
from app.web import render

router = APIRouter(include_in_schema=False)
TABLES = ("table1", "pass-rates", "rounds", "success-by-disease")


# The overview scans every task and verdict; it is kept until the data changes.
_cache: dict[str, tuple[tuple[object, ...], Any]] = {}
_lock = threading.Lock()


def _cached(session: SessionDep, name: str, make: Any) -> Any:
    key = overview.fingerprint(session)
    with _lock:
        found = _cache.get(name)
    if found is not None and found[0] == key:
        return found[1]
    value = make()
    with _lock:
        _cache[name] = (key, value)
    return value


def _figures(session: SessionDep) -> dict[str, Any]:
    found: dict[str, Any] = _cached(session, "figures", lambda: _compute(session))
    return found


def _compute(session: SessionDep) -> dict[str, Any]:
    rounds = overview.rounds_to_success(session)
    successes = sum(rounds.values())
    return {
        "table1": [{"modality": r.modality, "direction": r.direction, "diseases": r.diseases,
                    "success": r.success, "failed": r.failed, "api_failed": r.api_failed,
                    "avg_rounds_success": r.avg_rounds_success,
                    "paper_diseases": r.paper[0] if r.paper else None,
                    "paper_success": r.paper[1] if r.paper else None,
                    "paper_failed": r.paper[2] if r.paper else None,
                    "paper_avg_rounds": r.paper[3] if r.paper else None}
                   for r in overview.table1(session)],
        "pass-rates": [{"dimension": name, "passed": passed, "scored": scored,
                        "rate": wilson(passed, scored).value, "low": wilson(passed, scored).low,
                        "high": wilson(passed, scored).high,
                        "paper_rate": overview.PAPER_PASS_RATE[name]}
                       for name, (passed, scored) in overview.pass_rates(session).items()],
        "rounds": [{"success_round": r, "tasks": n, "share": n / successes if successes else None}
                   for r, n in rounds.items()],
        "success-by-disease": [{"modality": m, "disease": d, "success": s, "tasks": n,
                                "rate": wilson(s, n).value, "low": wilson(s, n).low,
                                "high": wilson(s, n).high}
                               for m, d, s, n in overview.success_by_disease(session)],
        "rounds_by_number": rounds,
        "judge_self_consistency": judge_consistency(session).as_dict(),
    }


def _charts(session: SessionDep) -> dict[str, str]:
    figures = _figures(session)
    return {
        "rounds": rounds_chart(figures["rounds_by_number"], overview.PAPER_ROUNDS),
        "diseases": interval_chart(
            [Point(f"{r['disease']} ({r['modality'].replace('_', ' ')})", "judge", r["rate"],
                   r["low"], r["high"], r["tasks"]) for r in figures["success-by-disease"]],
            "Success per disease (Wilson 95 % CI)", "share of tasks accepted"),
    }


@router.get("/overview", response_class=HTMLResponse)
def overview_page(request: Request, session: SessionDep) -> HTMLResponse:
    figures = _figures(session)
    context = {"figures": figures, "tables": TABLES,
               "consistency": figures["judge_self_consistency"],
               "paper_rounds": overview.PAPER_ROUNDS}
    return render(request, "overview/index.html", context)


@router.get("/overview/charts", response_class=HTMLResponse)
def overview_charts(request: Request, session: SessionDep) -> HTMLResponse:
    """The charts as a fragment, fetched by the page once its tables are shown."""
    charts = _cached(session, "charts", lambda: _charts(session))
    return render(request, "overview/_charts.html", {"charts": charts})


@router.get("/overview.json")
def overview_json(session: SessionDep) -> JSONResponse:
    figures = {k: v for k, v in _figures(session).items() if k != "rounds_by_number"}
    return JSONResponse({**figures,
                         "paper": {"pass_rate": overview.PAPER_PASS_RATE,
                                   "rounds_to_success": overview.PAPER_ROUNDS,
                                   "self_consistency_identical": 0.872}})


@router.get("/overview/{table}.csv")
def overview_csv(session: SessionDep, table: str) -> StreamingResponse:
    if table not in TABLES:
        raise HTTPException(404, f"no table {table!r}; tables: {', '.join(TABLES)}")
    return StreamingResponse(iter_csv(_figures(session)[table]), media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{table}.csv"'})
