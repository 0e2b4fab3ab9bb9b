"""Benchmark: one worker process against four, on one PostgreSQL database.

    .venv/bin/python benchmarks/workers.py [--tasks 128] [--latency 1.0] [--concurrency 4]

Starts a throwaway PostgreSQL server (Debian's binaries), imports the demo, and queues the
same --tasks tasks as four jobs (as `pipeline run --split 4` does). The workers are real
`medbanana pipeline worker` processes calling the fake Gemini server, which answers every
call after --latency seconds. Each run starts its workers first and times from queueing the
jobs to the last job done. Goal: four workers reach at least 3.5 x one worker's throughput.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.db import make_engine, migrate
from app.demo.generate import write_demo
from app.importer import import_tree
from app.job_models import Job, WorkerHeartbeat
from app.jobs.options import JobOptions
from app.jobs.runner import create_job
from app.models import SourceImage, Task
from tests.fake_gemini import FakeGemini, Reply, cooperative
from tests.pg_server import PostgresServer

GOAL = 3.5
JOBS = 4


def one_run(server: PostgresServer, name: str, demo: Path, workers: int, tasks: int,
            base_url: str, concurrency: int, var: Path) -> float:
    url = server.create_database(name)
    engine = make_engine(url)
    migrate(engine)
    import_tree(engine, demo / "run", demo / "source")
    with Session(engine) as session:
        ids = list(session.scalars(select(col(Task.id)).join(
            SourceImage, col(SourceImage.id) == Task.source_image_id)
            .where(col(SourceImage.present).is_(True)).order_by(col(Task.id)).limit(tasks)))
    env = {**os.environ, "MEDBANANA_DATABASE_URL": url, "MEDBANANA_VAR_DIR": str(var / name),
           "GEMINI_API_KEY": "k" * 39, "GOOGLE_GEMINI_BASE_URL": base_url,
           "MEDBANANA_LOG_LEVEL": "WARNING"}
    processes = [subprocess.Popen([sys.executable, "-m", "app.cli", "pipeline", "worker",
                                   "--poll", "0.2"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(workers)]
    try:
        _wait(lambda: _count(engine, WorkerHeartbeat) >= workers, 60)
        start = time.perf_counter()
        for share in range(JOBS):
            create_job(engine, ids[share::JOBS], JobOptions(backend="gemini", rounds=1,
                                                            concurrency=concurrency))
        _wait(lambda: _done(engine) == JOBS, 900)
        return time.perf_counter() - start
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(20)
        engine.dispose()


def _count(engine: Any, model: Any) -> int:
    with Session(engine) as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def _done(engine: Any) -> int:
    with Session(engine) as session:
        return int(session.scalar(select(func.count()).select_from(Job).where(
            col(Job.status) == "done")) or 0)


def _wait(check: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=128)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=4, help="tasks at a time per job")
    args = parser.parse_args()

    def slow(model: str, body: dict[str, Any], n: int) -> Reply:
        reply = cooperative(model, body, n)
        reply.delay = args.latency
        return reply

    work = Path(tempfile.mkdtemp(prefix="medbanana-workers-"))
    write_demo(work / "demo", size=256)
    server = PostgresServer()
    server.start()
    try:
        with FakeGemini(slow).serve() as base_url:
            times = {n: one_run(server, f"workers_{n}", work / "demo", n, args.tasks, base_url,
                                args.concurrency, work / "var") for n in (1, 4)}
    finally:
        server.stop()
    print(f"{args.tasks} tasks as {JOBS} jobs, {args.concurrency} tasks at a time per job, "
          f"every call answered after {args.latency:.1f} s (3 calls a task):")
    for n, seconds in times.items():
        print(f"  {n} worker{'s' if n > 1 else ''}: {seconds:.1f} s, "
              f"{args.tasks / seconds * 60:.0f} tasks a minute")
    speedup = times[1] / times[4]
    print(f"  four workers: {speedup:.2f} x one; goal >= {GOAL} x: "
          f"{'met' if speedup >= GOAL else 'NOT met'}")


if __name__ == "__main__":
    main()
