"""Benchmark: the reader study on the 88K-task database.

    .venv/bin/python benchmarks/reading.py [--db var/bench/bench.db] [--repeat 200]

Run benchmarks/import_scale.py first; it leaves the database behind. Measures drawing the
paper's pilot (100 stratified cases, 2 readers) and a large study (2,000 cases x 20 readers,
fully crossed), the reading screen and a submit through the ASGI app in-process, the
blinded images, and 20 readers x 50 submits in parallel against a live uvicorn server.
Goals: reading screen and submit p95 <= 50 ms; the parallel run loses nothing, no 5xx.
"""

import argparse
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import httpx
import uvicorn
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.models import Role
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.models import Answer, Assignment, Design
from app.web.main import create_app
from benchmarks.accounts import bench_token, bench_user

GOAL_P95_MS = 50.0
READERS, SUBMITS = 20, 50
FORM = {"compliance": "yes", "structure": "no", "realism": "yes", "fidelity": "cannot_assess",
        "overall": "reject", "confidence": "3"}


def percentile(samples: list[float], p: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[p - 1]


def report(name: str, samples: list[float]) -> float:
    p95 = percentile(samples, 95)
    print(f"{name:52s} p50 {percentile(samples, 50):6.1f} ms   p95 {p95:6.1f} ms   (n={len(samples)})")
    return p95


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(f"sqlite:///{args.db.resolve()}")
    migrate(engine)  # a database left by an older import_scale run
    run = secrets.token_hex(3)  # names of this run's studies and readers
    admin = bench_user(engine, "bench-admin")
    readers = [bench_user(engine, f"bench-reader-{i:02d}", Role.reader) for i in range(READERS)]
    ids = [r.id or 0 for r in readers]

    chest = CaseFilter(modality=("chest_xray",), outcome=("success",))
    with Session(engine) as session:
        _pilot, pilot_ms = timed(lambda: create_study(session=session, created_by=admin, plan=StudyPlan(
            name=f"bench pilot {run}", case_filter=chest, reader_ids=ids[:2], seed=42,
            design=Design.validation, strata_facets=("verdict", "direction"),
            per_stratum={f"{v}/{d}": 25 for v in ("pass", "fail") for d in ("add", "remove")})))
        large, large_ms = timed(lambda: create_study(session=session, created_by=admin, plan=StudyPlan(
            name=f"bench large {run}", case_filter=CaseFilter(outcome=("success",)), reader_ids=ids,
            seed=7, design=Design.accepted, strata_facets=("modality",),
            per_stratum={"chest_xray": 1000, "brain_mri": 500, "fundus": 500},
            repeat_fraction=0.1)))
        assignments = session.scalar(select(func.count()).select_from(Assignment).where(
            col(Assignment.study_id) == large.id))
    print(f"database: {args.db}; run {run}")
    print(f"create the pilot (100 cases, 2 readers, stratified):      {pilot_ms:7.0f} ms")
    print(f"create a large study (2,000 cases x 20 readers, 10 % repeats, "
          f"{assignments} reads): {large_ms:7.0f} ms")

    settings = Settings(demo=True, var_dir=Path(tempfile.mkdtemp()))
    token = bench_token(engine, readers[0].name, Role.reader)
    client = TestClient(create_app(settings, engine), headers={"Authorization": f"Bearer {token}"})
    sid = large.id
    worst = 0.0
    screen = [timed(lambda n=n: client.get(f"/read/{sid}/{n % 2000 + 1}"))[1]
              for n in range(args.repeat)]
    worst = max(worst, report("GET /read/{study}/{n} (reading screen)", screen))
    submits = []
    for n in range(args.repeat):
        response, ms = timed(lambda n=n: client.post(f"/read/{sid}/{n + 1}", data=FORM | {
            "submission_id": f"bench-{run}-{n:05d}"}, follow_redirects=False))
        assert response.status_code == 303, response.status_code
        submits.append(ms)
    worst = max(worst, report("POST /read/{study}/{n} (submit, fsync'd)", submits))
    page = BeautifulSoup(client.get(f"/read/{sid}/{args.repeat + 1}").text, "html.parser")
    edit_url = page.select_one("#img-edit")["src"]  # type: ignore[index]
    _, cold = timed(lambda: client.get(str(edit_url)))
    warm = [timed(lambda: client.get(str(edit_url)))[1] for _ in range(50)]
    print(f"blinded edit image, preview size: first {cold:.0f} ms (resize, then cached); "
          f"afterwards p95 {percentile(warm, 95):.1f} ms")

    tokens = [bench_token(engine, r.name, Role.reader) for r in readers]
    before = _answers(engine)
    server = uvicorn.Server(uvicorn.Config(create_app(settings, engine), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]

    def reader_work(index: int) -> list[tuple[int, float]]:
        out = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                          headers={"Authorization": f"Bearer {tokens[index]}"}) as http:
            for n in range(SUBMITS):
                response, ms = timed(lambda n=n: http.post(
                    f"/read/{sid}/{1000 + n}", data=FORM | {
                        "submission_id": f"bench-{run}-p{index:02d}-{n:03d}"}))
                out.append((response.status_code, ms))
        return out

    start = time.perf_counter()
    with ThreadPoolExecutor(READERS) as pool:
        results = [r for rs in pool.map(reader_work, range(READERS)) for r in rs]
    wall = time.perf_counter() - start
    server.should_exit = True
    thread.join(timeout=10)
    stored = _answers(engine) - before
    statuses = Counter(status for status, _ in results)
    print(f"{READERS} readers x {SUBMITS} submits in parallel over HTTP: {wall:.1f} s, "
          f"{len(results) / wall:.0f} submits/s, statuses {dict(statuses)}, "
          f"stored {stored} of {len(results)}")
    report("  latency of one submit under that load", [ms for _, ms in results])
    lost = len(results) - stored
    fine = worst <= GOAL_P95_MS and lost == 0 and set(statuses) == {303}
    print(f"goal (p95 <= {GOAL_P95_MS:.0f} ms in-process, nothing lost, no 5xx): "
          f"{'met' if fine else 'NOT met'} (worst p95 {worst:.1f} ms, lost {lost})")


def _answers(engine) -> int:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return int(session.scalar(select(func.count()).select_from(Answer)) or 0)


if __name__ == "__main__":
    main()
