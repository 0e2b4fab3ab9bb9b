"""The overview's tables and charts (app/overview/tables.py's queries, with intervals), cached by
a fingerprint of the data so repeat views cost nothing."""

from typing import Any

from sqlmodel import Session

from app.agreement.consistency import judge_consistency
from app.agreement.stats import wilson
from app.charts import Point, interval_chart, rounds_chart
from app.errors import NotFound
from app.fingerprints import fingerprint
from app.memo import Memo
from app.overview import tables as overview

# The overview scans every task and verdict; it is kept until the data changes.
# The figures and the charts of the newest state of each database served.
_kept: Memo[Any] = Memo(8)


def _cached(session: Session, name: str, make: Any) -> Any:
    return _kept.get_or_make((name, fingerprint(session)), make)


# The overview's tables that download as CSV.
TABLES = ("table1", "pass-rates", "rounds", "success-by-disease")


def overview_table(session: Session, table: str) -> list[dict[str, Any]]:
    if table not in TABLES:
        raise NotFound(f"no table {table!r}; tables: {', '.join(TABLES)}")
    found: list[dict[str, Any]] = overview_figures(session)[table]
    return found


def overview_figures(session: Session) -> dict[str, Any]:
    """Every table of the overview, kept until an import or a run adds data."""
    found: dict[str, Any] = _cached(session, "figures", lambda: _compute(session))
    return found


def _compute(session: Session) -> dict[str, Any]:
    rounds = overview.rounds_to_success(session)
    successes = sum(rounds.values())
    return {
        "table1": [{"modality": r.modality, "direction": r.direction, "diseases": r.diseases,
                    "success": r.success, "failed": r.failed, "api_failed": r.api_failed,
                    "blocked": r.blocked, "unjudged": r.unjudged, "avg_rounds_success": r.avg_rounds_success,
                    "paper_diseases": r.paper[0] if r.paper else None,
                    "paper_success": r.paper[1] if r.paper else None,
                    "paper_failed": r.paper[2] if r.paper else None,
                    "paper_avg_rounds": r.paper[3] if r.paper else None}
                   for r in overview.table1(session)],
        "pass-rates": [{"dimension": name, "passed": passed, "scored": scored,
                        **_rate(passed, scored), "paper_rate": overview.PAPER_PASS_RATE[name]}
                       for name, (passed, scored) in overview.pass_rates(session).items()],
        "rounds": [{"success_round": r, "tasks": n, "share": n / successes if successes else None}
                   for r, n in rounds.items()],
        "success-by-disease": [{"modality": m, "disease": d, "success": s, "tasks": n,
                                **_rate(s, n)}
                               for m, d, s, n in overview.success_by_disease(session)],
        "rounds_by_number": rounds,
        "judge_self_consistency": judge_consistency(session).as_dict(),
    }


def overview_charts(session: Session) -> dict[str, str]:
    found: dict[str, str] = _cached(session, "charts", lambda: _draw(session))
    return found


def _draw(session: Session) -> dict[str, str]:
    figures = overview_figures(session)
    return {
        "rounds": rounds_chart(figures["rounds_by_number"], overview.PAPER_ROUNDS),
        "diseases": interval_chart(
            [Point(f"{r['disease']} ({r['modality'].replace('_', ' ')})", "judge", r["rate"],
                   r["low"], r["high"], r["tasks"]) for r in figures["success-by-disease"]],
            "Success per disease (Wilson 95 % CI)", "share of tasks accepted"),
    }




def _rate(successes: int, n: int) -> dict[str, float | None]:
    estimate = wilson(successes, n)
    return {"rate": estimate.value, "low": estimate.low, "high": estimate.high}
