"""Benchmark: readers submit answers while an admin creates a 1,000-case x 3-reader study on
the 88K-task database and its previews are drawn (issue 43). Goal, a ratio settled in one run:
the submits' p95 while the study is made and drawn <= 3x their p95 with nothing else running,
and no submit fails.

    .venv/bin/python benchmarks/create_while_reading.py [--db var/bench/bench.db | --url postgres]
        [--rounds 3] [--quiet 5]

Run benchmarks/import_scale.py first. A small study is made for the readers; the judged-edit
pool is built once (the server does it at start); then two reader threads submit answers,
each in its own session as the web app's request threads would, while the main thread in
turn waits (A: submits alone) and makes a big study and draws its previews as the web app
does after it (B). Every submit that raises is counted as failed.
"""

import argparse
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.models import Role
from app.studies.answers import AnswerIn, submit_answer
from app.studies.design import StudyPlan, create_study
from app.studies.judged_pool import judged_pool
from app.studies.models import Assignment, Design, Study
from app.studies.previews import warm_previews
from benchmarks import postgres
from benchmarks.accounts import bench_user
from benchmarks.plans import watch_queries

STRATA = [f"{v}/{m}" for v in ("pass", "fail") for m in ("chest_xray", "brain_mri", "fundus")]


def plan(name: str, readers: list[int], cases: int) -> StudyPlan:
    per = {key: cases // len(STRATA) + (i < cases % len(STRATA)) for i, key in enumerate(STRATA)}
    return StudyPlan(name=name, case_filter=CaseFilter(), design=Design.validation,
                     reader_ids=readers, seed=5, strata_facets=("verdict", "modality"),
                     per_stratum=per, repeat_fraction=0.1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--url", help="a database URL instead of --db; 'postgres' for the benchmark server")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quiet", type=float, default=5.0, help="seconds of submits with nothing else")
    args = parser.parse_args()
    if not args.url and not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(postgres.resolve(args.url, args.db))
    migrate(engine)
    run = secrets.token_hex(3)
    admin = bench_user(engine, "bench-admin")
    readers = [bench_user(engine, f"bench-reader-{i:02d}", Role.reader) for i in range(3)]
    with Session(engine) as session:
        judged_pool(session)
        small = create_study(session=session, created_by=admin,
                             plan=plan(f"bench reading {run}", [r.id or 0 for r in readers[:2]], 60))
        small_id = small.id
    latencies: list[tuple[float, float]] = []  # (started, ms)
    failures: list[str] = []
    stop = threading.Event()

    def read(reader_id: int) -> None:
        with Session(engine) as session:
            study = session.get(Study, small_id)
            mine = list(session.exec(select(Assignment).where(
                col(Assignment.study_id) == small_id, col(Assignment.user_id) == reader_id)))
        n = 0
        while not stop.is_set():
            assignment = mine[n % len(mine)]
            n += 1
            answer = AnswerIn(compliance="yes", structure="yes", realism="yes", fidelity="yes",
                              overall="accept", confidence=3,
                              submission_id=f"bench-{run}-{reader_id}-{n:06d}")
            start = time.perf_counter()
            try:
                with Session(engine) as session:
                    assert study is not None
                    submit_answer(session, study, assignment, answer)
            except Exception as error:  # counted, and the reader goes on
                failures.append(f"{type(error).__name__}: {error}"[:200])
            latencies.append((start, (time.perf_counter() - start) * 1000))
            time.sleep(0.02)  # a reader's next answer is not instantaneous

    threads = [threading.Thread(target=read, args=(r.id,)) for r in readers[:2]]
    for thread in threads:
        thread.start()
    heavy = watch_queries(engine)
    cache = Path(tempfile.mkdtemp())
    ratios, created_ms, drawn_s = [], [], []

    def p95(window: tuple[float, float]) -> tuple[float, int]:
        found = [ms for started, ms in latencies if window[0] <= started <= window[1]]
        return statistics.quantiles(found, n=100, method="inclusive")[94], len(found)

    for n in range(args.rounds):  # A (nothing else) then B (a study made and drawn), in turn
        quiet = time.perf_counter()
        time.sleep(args.quiet)
        alone, alone_n = p95((quiet, time.perf_counter()))
        start = time.perf_counter()
        with Session(engine) as session:
            made = create_study(session=session, created_by=admin,
                                plan=plan(f"bench create {run} {n}", [r.id or 0 for r in readers], 1000))
        created = time.perf_counter()
        warm_previews(engine, made.id or 0, cache)  # what the web app does once it is made
        end = time.perf_counter()
        during, during_n = p95((start, end))
        ratios.append(during / alone)
        created_ms.append((created - start) * 1000)
        drawn_s.append(end - created)
        print(f"round {n + 1}: submits alone p95 {alone:.1f} ms ({alone_n}); while a 1,000 x 3 "
              f"study is made ({created_ms[-1]:.0f} ms) and its previews drawn ({drawn_s[-1]:.1f} s) "
              f"p95 {during:.1f} ms ({during_n}): {ratios[-1]:.2f}x", flush=True)
    stop.set()
    for thread in threads:
        thread.join()
    print(f"database: {engine.url.render_as_string()}")
    print(f"p95 while making and drawing / p95 alone: min {min(ratios):.2f}, median "
          f"{statistics.median(ratios):.2f}, max {max(ratios):.2f} (goal <= 3)")
    print(f"creation: median {statistics.median(created_ms):.0f} ms; drawing: median "
          f"{statistics.median(drawn_s):.1f} s")
    print(f"submits in all: {len(latencies)}, failed: {len(failures)} (goal: none)")
    for failure in sorted(set(failures))[:5]:
        print(f"  {failure}")
    heavy.print_plans(engine)

if __name__ == "__main__":
    main()
