"""The data set in the paper's terms, from whatever is imported: Table 1 (success, failed and
rounds by modality and direction), Table 2 (judge pass rate per dimension over all attempts)
and Fig. 3 (rounds to success, success per disease), beside the paper's own figures."""

from dataclasses import dataclass

from sqlalchemy import case, func, select
from sqlmodel import Session, col

from app.models import JudgeVerdict, Run, Task
from pipeline.vocabulary import DIMENSIONS, Outcome

# ../shared/medbanana-format.md, section 5.
PAPER_TABLE1 = {
    ("chest_xray", "add"): (12, 9854, 7971, 1.42), ("chest_xray", "remove"): (12, 10667, 4750, 1.28),
    ("brain_mri", "add"): (4, 4536, 8630, 1.35), ("brain_mri", "remove"): (4, 4355, 6949, 1.19),
    ("fundus", "add"): (7, 18505, 3162, 1.51), ("fundus", "remove"): (7, 2718, 6360, 1.33),
}
PAPER_PASS_RATE = {"compliance": 0.783, "structure": 0.758, "realism": 0.791, "fidelity": 0.712,
                   "qualified": 0.660}
PAPER_ROUNDS = {"1": 0.58, "2": 0.25, "3-5": 0.17}
PASS_COLUMNS = (*DIMENSIONS, "qualified")


@dataclass(frozen=True)
class Table1Row:
    modality: str
    direction: str
    diseases: int
    success: int
    failed: int
    api_failed: int
    blocked: int  # refused by the API on safety or content grounds (regenerations only)
    unjudged: int  # no round of the run was ever judged: neither a success nor a rejection
    avg_rounds_success: float | None
    paper: tuple[int, int, int, float] | None


def table1(session: Session) -> list[Table1Row]:
    query = (select(col(Task.modality), col(Task.direction),
                    func.count(func.distinct(Task.disease)),
                    func.sum(case((col(Task.outcome) == Outcome.success, 1), else_=0)),
                    func.sum(case((col(Task.outcome) == Outcome.failed, 1), else_=0)),
                    func.sum(case((col(Task.outcome) == Outcome.api_failed, 1), else_=0)),
                    func.sum(case((col(Task.outcome) == Outcome.blocked, 1), else_=0)),
                    func.sum(case((col(Task.outcome) == Outcome.unjudged, 1), else_=0)),
                    func.avg(case((col(Task.outcome) == Outcome.success, Task.n_rounds), else_=None)))
             .group_by(col(Task.modality), col(Task.direction))
             .order_by(col(Task.modality), col(Task.direction)))
    return [Table1Row(m, d, int(n), int(s or 0), int(f or 0), int(a or 0), int(b or 0),
                      int(u or 0), float(avg) if avg is not None else None, PAPER_TABLE1.get((m, d)))
            for m, d, n, s, f, a, b, u, avg in session.execute(query)]


def pass_rates(session: Session) -> dict[str, tuple[int, int]]:
    """Per dimension: verdicts that passed, and verdicts that scored it (errors left out)."""
    columns = []
    for name in PASS_COLUMNS:
        column = getattr(JudgeVerdict, name)
        columns += [func.sum(case((column.is_(True), 1), else_=0)), func.count(column)]
    row = session.execute(select(*columns).where(col(JudgeVerdict.error).is_(None))).one()
    return {name: (int(row[2 * i] or 0), int(row[2 * i + 1] or 0))
            for i, name in enumerate(PASS_COLUMNS)}


def rounds_to_success(session: Session) -> dict[int, int]:
    """Successful tasks by the round that succeeded (the latest run of each task)."""
    query = (select(col(Run.success_round), func.count())
             .join(Task, col(Task.latest_run_id) == Run.id)
             .where(col(Run.outcome) == Outcome.success).group_by(col(Run.success_round))
             .order_by(col(Run.success_round)))
    return {int(r): int(n) for r, n in session.execute(query) if r is not None}


def success_by_disease(session: Session) -> list[tuple[str, str, int, int]]:
    """(modality, disease, successes, tasks), for the per-disease success chart."""
    query = (select(col(Task.modality), col(Task.disease),
                    func.sum(case((col(Task.outcome) == Outcome.success, 1), else_=0)), func.count())
             .group_by(col(Task.modality), col(Task.disease))
             .order_by(col(Task.modality), col(Task.disease)))
    return [(m, d, int(s or 0), int(n)) for m, d, s, n in session.execute(query)]


