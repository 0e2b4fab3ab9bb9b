"""Benchmark: readers submit answers while an admin creates a 1,000-case x 3-reader study on
the 88K-task database. Goals: creation <= 600 ms; the readers' submits p95 <= 50 ms, none failed.

    .venv/bin/python benchmarks/create_while_reading.py [--db var/bench/bench.db | --url postgres]

Run benchmarks/import_scale.py first. A small study is made for the readers; the judged-edit
pool is built once (the server does it at start); then two reader threads submit answers
back to back, each in its own session, as the web app's request threads would, while the
main thread creates the big study. Every submit that raises is counted as failed.
"""

import argparse
import secrets
import statistics
import sys
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
    stop = threading.Event()
    latencies: list[tuple[float, float]] = []  # (started, ms)
    failures: list[str] = []

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

    threads = [threading.Thread(target=read, args=(r.id,)) for r in readers[:2]]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the readers are at it before the creation starts
    heavy = watch_queries(engine)
    start = time.perf_counter()
    with Session(engine) as session:
        create_study(session=session, created_by=admin,
                     plan=plan(f"bench create {run}", [r.id or 0 for r in readers], 1000))
    end = time.perf_counter()
    created = end - start
    time.sleep(0.5)  # a submit held up by the creation ends after it
    stop.set()
    for thread in threads:
        thread.join()
    # Every submit that started while the study was being made, however long it then took.
    during = [ms for started, ms in latencies if start <= started <= end]
    print(f"database: {engine.url.render_as_string()}")
    print(f"create a 1,000 x 3 study while two readers submit: {created * 1000:.0f} ms (goal <= 600 ms)")
    if len(during) >= 2:
        p95 = statistics.quantiles(during, n=100, method="inclusive")[94]
        print(f"submits during the creation: {len(during)}, p50 {statistics.median(during):.1f} ms, "
              f"p95 {p95:.1f} ms, max {max(during):.1f} ms (goal p95 <= 50 ms)")
    print(f"submits in all: {len(latencies)}, failed: {len(failures)}")
    for failure in sorted(set(failures))[:5]:
        print(f"  {failure}")
    heavy.print_plans(engine)


if __name__ == "__main__":
    main()
