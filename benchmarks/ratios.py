"""Benchmark: what is left of speed at 88K, as ratios a busy machine can settle (issue 43). Not
part of the tests.

    .venv/bin/python benchmarks/ratios.py [--db var/bench/bench.db] [--url postgres] [--rounds 5]

Run benchmarks/import_scale.py first (with --postgres for the second engine). Each engine gets
one 1,000-case x 3-reader validation study with every reader's answers (made once, found by
name after), and the app serving it in-process on one event loop (benchmarks/serving.py).
Then, round after round, every page below is timed on each engine in turn, A and B
interleaved:

- each page against its own SQL, recorded as it ran and replayed on one raw connection with
  every row fetched (benchmarks/plans.py): agreement and /quality after a new read, and after
  a start (every cache forgotten); the pairwise form after a start and on each change of kind
  and strata;
- each /cases view and the case page against the trivial authenticated API call
  (/api/cases/{id}) in the same round;
- a kept page (asked again, nothing changed): how many statements it runs;
- SQLite's page time against PostgreSQL's, round by round, when both are given;
- the server's RSS after the first round of views and after the last.

Each figure is reported as min, median and max over the rounds.
"""

import argparse
import random
import resource
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fastapi.testclient import TestClient
from sqlalchemy import func, insert, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.agreement.warm import warm_figures
from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.memo import forget_all
from app.models import Attempt, AttemptMetric, Role, Run, Task
from app.quality.report import warm as warm_quality
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.judged_pool import warm as warm_judged_pool
from app.studies.models import Answer, Assignment, Design, Study
from app.web.main import create_app
from benchmarks import postgres, serving
from benchmarks.accounts import bench_admin_token, bench_user
from benchmarks.plans import Recorded, record_queries
from pipeline.vocabulary import DIMENSIONS

NAME = "bench ratios 1000x3"
CASES_URLS = ("/cases", "/cases?modality=chest_xray&outcome=failed", "/cases?q=pleural",
              "/cases?sort=changed", "CURSOR", "CASE")


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def study_of(engine: Engine, cases: int = 1000, readers: int = 3,
             name: str = NAME) -> tuple[int, list[tuple[int, int]]]:
    """The benchmark's study on this database, made and answered the first time."""
    people = [bench_user(engine, f"bench-reader-{i:02d}", Role.reader) for i in range(readers)]
    with Session(engine) as session:
        found = session.scalars(select(Study).where(col(Study.name) == name)).first()
        if found is None:
            sixth = cases // 6
            strata = {f"{v}/{m}": sixth for v in ("pass", "fail")
                      for m in ("chest_xray", "brain_mri", "fundus")}
            strata["pass/chest_xray"] += cases - 6 * sixth
            found = create_study(session=session, created_by=bench_user(engine, "bench-admin"),
                                 plan=StudyPlan(name=name, case_filter=CaseFilter(),
                                                design=Design.validation,
                                                reader_ids=[p.id or 0 for p in people], seed=3,
                                                strata_facets=("verdict", "modality"),
                                                per_stratum=strata))
            fresh = True
        else:
            fresh = False
        assignments = [(a, i) for a, i in session.execute(
            select(col(Assignment.id), col(Assignment.item_id))
            .where(col(Assignment.study_id) == found.id))]
        sid = found.id or 0
    if fresh:
        rng = random.Random(11)
        rows = [{"assignment_id": aid, "version": 1, "submission_id": f"ratios-{aid}",
                 **{q: ("yes" if rng.random() < 0.8 else "no") for q in DIMENSIONS},
                 "overall": "accept" if rng.random() < 0.75 else "reject", "confidence": 3,
                 "tags": "[]", "comment": "", "time_on_case_ms": 20_000, "retracted": False}
                for aid, _ in assignments]
        with engine.begin() as connection:
            connection.execute(insert(Answer), rows)
    return sid, assignments


@dataclass
class Figures:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def line(self, name: str, unit: str = "") -> str:
        xs = self.values.get(name, [])
        if not xs:
            return f"{name}: no measurement"
        return (f"{name}: min {min(xs):.2f}{unit}, median {statistics.median(xs):.2f}{unit}, "
                f"max {max(xs):.2f}{unit} (n={len(xs)})")


@dataclass
class Served:
    label: str
    engine: Engine
    client: TestClient
    recorded: Recorded
    study: int
    assignments: list[tuple[int, int]]
    case_id: int
    cursor: str = ""
    version: int = 1

    def timed(self, url: str) -> tuple[float, float, int]:
        """Server time of ``url`` (ms), its SQL replayed (ms), and its statements."""
        with self.recorded.capture():
            start = time.perf_counter()
            response = self.client.get(url)
            seconds = time.perf_counter() - start
        assert response.status_code == 200, (url, response.status_code, response.text[:300])
        return seconds * 1000, self.recorded.replay() * 1000, self.recorded.count

    def new_read(self) -> None:
        """One more version of one reader's answer: every figure of the study changes."""
        self.version += 1
        aid = self.assignments[self.version % len(self.assignments)][0]
        with self.engine.begin() as connection:
            newest = connection.scalar(select(func.max(Answer.version)).where(
                col(Answer.assignment_id) == aid)) or 0
            connection.execute(insert(Answer), [{
                "assignment_id": aid, "version": newest + 1, "submission_id": f"r-{secrets.token_hex(6)}",
                **{q: "yes" for q in DIMENSIONS}, "overall": "accept", "confidence": 3, "tags": "[]",
                "comment": "", "time_on_case_ms": 20_000, "retracted": False}])


def started(engine: Engine) -> Callable[[], None]:
    """A server just started: every cache forgotten, then what its start warms (app/web/
    main.py: the judged-edit pool, /quality's report, the figures' one-time costs), which a
    running server has done before its first page."""
    def restart() -> None:
        forget_all()
        warm_judged_pool(engine)
        warm_quality(engine)
        warm_figures()
    return restart


def against_sql(f: Figures, s: Served, name: str, url: str, prepare: Callable[[], None]) -> float:
    prepare()
    page, sql, _ = s.timed(url)
    f.add(f"{s.label} {name}: page / its SQL", page / max(sql, 1e-3))
    f.add(f"{s.label} {name}: page ms", page)
    f.add(f"{s.label} {name}: SQL ms", sql)
    return page


GROUPS = ("agreement", "quality", "pairwise", "kept", "cases")


def round_of(f: Figures, s: Served, groups: tuple[str, ...] = GROUPS) -> dict[str, float]:
    """One round of the pages of ``groups`` on one engine; the page times, for the
    cross-engine ratios."""
    sid, times = s.study, {}
    agreement, quality = f"/studies/{sid}/agreement", f"/quality?study={sid}"
    restart = started(s.engine)
    if "agreement" in groups:
        agreement_pages(f, s, times, agreement, restart)
    if "quality" in groups:
        times["quality after a read"] = against_sql(f, s, "/quality after a read", quality, s.new_read)
        times["quality after a start"] = against_sql(f, s, "/quality after a start", quality, restart)
    pairwise = "/studies/new/pairwise"
    if "pairwise" in groups:
        pairwise_pages(f, s, times, pairwise, restart)
    if "kept" in groups:
        for label, url in (("agreement kept", agreement), ("quality kept", quality),
                           ("pairwise kept", pairwise)):
            s.timed(url)  # made if not kept yet, then asked again
            _, _, statements = s.timed(url)
            f.add(f"{s.label} {label}: statements", statements)
    if "cases" in groups:
        for url in CASES_URLS:
            target = {"CURSOR": s.cursor, "CASE": f"/cases/{s.case_id}"}.get(url, url)
            s.timed(target)  # the running server has seen the page before
            api, _, _ = s.timed(f"/api/cases/{s.case_id}")
            page, _, _ = s.timed(target)
            f.add(f"{s.label} {url}: page / API call", page / api)
    return times


def agreement_pages(f: Figures, s: Served, times: dict[str, float], agreement: str,
                    restart: Callable[[], None]) -> None:
    times["agreement after a read"] = against_sql(f, s, "agreement after a read", agreement, s.new_read)
    times["agreement after a start"] = against_sql(f, s, "agreement after a start", agreement, restart)


def pairwise_pages(f: Figures, s: Served, times: dict[str, float], pairwise: str,
                   restart: Callable[[], None]) -> None:
    times["pairwise after a start"] = against_sql(f, s, "pairwise form after a start", pairwise, restart)
    # The server's floor in the same round: a page with no SQL at all, and the trivial
    # authenticated API call. A change's SQL is a version check of a fraction of a
    # millisecond, below what any request costs here.
    floor, _, _ = s.timed("/healthz")
    api, _, _ = s.timed(f"/api/cases/{s.case_id}")
    f.add(f"{s.label} /healthz (no SQL) ms", floor)
    f.add(f"{s.label} trivial API call ms", api)
    for label, url in (("pairwise kind accepted", f"{pairwise}?kind=accepted"),
                       ("pairwise kind runs", f"{pairwise}?kind=runs"),
                       ("pairwise strata modality", f"{pairwise}?facets=modality"),
                       ("pairwise strata verdicts", f"{pairwise}?kind=consecutive&facets=verdicts")):
        times[label] = against_sql(f, s, label, url, lambda: None)
        f.add(f"{s.label} {label}: page / trivial API call", times[label] / api)


def same_metrics(sqlite: Engine, other: Engine) -> None:
    """The preservation metrics the worker computed on the SQLite database (two hours of
    image reading at 88K), copied to the other when it has none: without them the other's
    pairwise pools hold pairs SQLite's leave out as identical images, and the two engines
    would not be timed on the same data."""
    with other.connect() as connection:
        if connection.scalar(select(func.count()).select_from(AttemptMetric)):
            return
    # The engines' ids differ (PostgreSQL hands them out in blocks): an edit is its task's
    # key and its round there, as in the run's files.
    edit = (select(col(Task.task_key), col(Attempt.round), col(Attempt.id))
            .join(Run, col(Run.id) == Attempt.run_id).join(Task, col(Task.id) == Run.task_id))
    with other.connect() as connection:
        ids = {(key, number): aid for key, number, aid in connection.execute(edit)}
    table = AttemptMetric.__table__  # type: ignore[attr-defined]
    with sqlite.connect() as source:
        measured = {aid: (key, number) for key, number, aid in source.execute(edit)}
        rows = [dict(r._mapping) | {"attempt_id": ids[measured[r.attempt_id]]}
                for r in source.execute(select(table)) if measured.get(r.attempt_id) in ids]
    with other.begin() as target:
        for start in range(0, len(rows), 20_000):
            target.execute(insert(AttemptMetric), rows[start:start + 20_000])
    print(f"copied {len(rows):,} metrics rows to the second engine", flush=True)


def served(label: str, engine: Engine) -> tuple[Served, object]:
    migrate(engine)
    sid, assignments = study_of(engine)
    # No pipeline worker: its polling is not any page's SQL.
    settings = Settings(demo=True, var_dir=Path(tempfile.mkdtemp()), worker=False)
    headers = {"Authorization": f"Bearer {bench_admin_token(engine)}"}
    context = serving.running(create_app(settings, engine, settle=True), headers)  # as served
    client = context.__enter__()
    with Session(engine) as session:
        case_id = session.scalar(select(col(Task.id)).order_by(col(Task.id)).offset(5000).limit(1)) or 1
    found = Served(label, engine, client, record_queries(engine), sid, assignments, case_id)
    page = client.get("/cases?sort=ssim_outside&outcome=success", headers={"HX-Request": "true"})
    after = page.text.split('hx-get="', 1)[1].split('"', 1)[0] if 'hx-get="/cases?' in page.text else ""
    found.cursor = after.replace("&amp;", "&") or "/cases?sort=ssim_outside&outcome=success"
    return found, context


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--url", help="'postgres' (the benchmark server) or a URL: a second engine")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--pages", default=",".join(GROUPS),
                        help=f"which pages, comma-separated: {', '.join(GROUPS)}")
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engines = [("SQLite", make_engine(postgres.resolve(None, args.db)))]
    if args.url and not args.sqlite_only:
        engines.append(("PostgreSQL", make_engine(postgres.resolve(args.url, args.db))))
    if len(engines) == 2:
        same_metrics(engines[0][1], engines[1][1])
    every = [served(label, engine) for label, engine in engines]
    f = Figures()
    rss: list[float] = []
    for n in range(args.rounds):
        groups = tuple(g for g in args.pages.split(",") if g in GROUPS)
        times = [round_of(f, s, groups) for s, _ in every]
        if len(times) == 2:
            for page in times[0]:
                f.add(f"SQLite / PostgreSQL {page}", times[0][page] / times[1][page])
        rss.append(rss_mib())
        print(f"round {n + 1} of {args.rounds}: RSS {rss[-1]:.0f} MiB", flush=True)
    print()
    for name in f.values:
        print(f.line(name))
    print(f"\nRSS after the first round {rss[0]:.0f} MiB, after the last {rss[-1]:.0f} MiB: "
          f"{rss[-1] / rss[0]:.2f}x")
    for _, context in every:
        context.__exit__(None, None, None)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
