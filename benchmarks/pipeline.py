"""Benchmark: the pipeline against the local fake Gemini server, and its bookkeeping.

    .venv/bin/python benchmarks/pipeline.py [--db var/bench/bench.db] [--tasks 500]
        [--latency 1.0] [--concurrency 16] [--rounds-only]

Run benchmarks/import_scale.py first (its database has 220K attempts already). Part 1 times
the database work of one round (store the round, read the history back) and the close of a
run, averaged over many rounds. Part 2 regenerates --tasks tasks with the real gemini backend
and google-genai client against the fake server, every call answered after --latency
seconds, with --concurrency tasks at a time. Goals: bookkeeping <= 5 ms per round; wall
time <= 1.3 x the ideal (calls x latency / concurrency).
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.db import make_engine, migrate
from app.jobs import store
from app.jobs.options import JobOptions
from app.jobs.runner import claim, create_job, run_job
from app.models import Attempt, SourceImage, Task
from pipeline.gemini import GeminiBackend
from pipeline.loop import RetryPolicy
from pipeline.ports import Round
from pipeline.vocabulary import Outcome
from tests.fake_gemini import FakeGemini, Reply, cooperative

GOAL_ROUND_MS = 5.0
GOAL_RATIO = 1.3


def bookkeeping(engine: Any, rounds: int = 300) -> None:
    with Session(engine) as session:
        attempts = session.scalar(select(func.count()).select_from(Attempt)) or 0
        task_ids = list(session.scalars(select(col(Task.id)).order_by(col(Task.id).desc())
                                        .limit(rounds // 3)))
    folder = Path(tempfile.mkdtemp())
    root_id = store.output_root(engine, folder)
    image = b"\xff\xd8" + b"0" * 300_000  # a 300 KB stand-in: the write is what counts
    per_round, closes = [], []
    for task_id in task_ids:
        run_id = store.start_run(engine, task_id)
        for number in (1, 2, 3):
            item = Round(number, "instruction", "thinking", image, None,
                               {"compliance": False, "structure": True, "realism": True,
                                "fidelity": True, "qualified": False, "reason": "too subtle"},
                               None, "judge thinking", "gemini-2.5-pro", "abc123", "{}", {})
            start = time.perf_counter()
            store.save_round(engine, run_id, root_id, folder, item)
            store.rounds_done(engine, run_id)
            per_round.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        store.finish_run(engine, run_id, Outcome.failed)
        closes.append((time.perf_counter() - start) * 1000)
    p50 = statistics.median(per_round)
    print(f"bookkeeping with {attempts:,} attempts in the database, {len(per_round)} rounds:")
    print(f"  per round (store the round + read the history): median {p50:.2f} ms, "
          f"p95 {statistics.quantiles(per_round, n=20)[-1]:.2f} ms")
    print(f"  closing a run (outcome and task summary): median {statistics.median(closes):.2f} ms")
    print(f"  goal <= {GOAL_ROUND_MS:.0f} ms per round: {'met' if p50 <= GOAL_ROUND_MS else 'NOT met'}")


def throughput(engine: Any, tasks: int, latency: float, concurrency: int) -> None:
    with Session(engine) as session:
        ids = list(session.scalars(select(col(Task.id)).join(
            SourceImage, col(SourceImage.id) == Task.source_image_id)
            .where(col(SourceImage.present).is_(True)).order_by(col(Task.id)).limit(tasks)))

    def slow(model: str, body: dict[str, Any], n: int) -> Reply:
        reply = cooperative(model, body, n)
        reply.delay = latency
        return reply

    fake = FakeGemini(slow)
    job_id = create_job(engine, ids, JobOptions(backend="gemini", concurrency=concurrency))
    lease = claim(engine, job_id)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("benchmark-key", base_url=url, timeout_seconds=60)
        start = time.perf_counter()
        asyncio.run(run_job(engine, lease, lambda _: backend, Path(tempfile.mkdtemp()),
                            policy=RetryPolicy(attempts=3, base_seconds=0.5)))
        wall = time.perf_counter() - start
    calls = len(fake.calls)
    ideal = calls * latency / concurrency
    print(f"{len(ids)} tasks, {calls} calls answered after {latency:.1f} s each, "
          f"concurrency {concurrency}:")
    print(f"  wall {wall:.1f} s; ideal {ideal:.1f} s; ratio {wall / ideal:.2f} "
          f"(goal <= {GOAL_RATIO}: {'met' if wall / ideal <= GOAL_RATIO else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds-only", action="store_true", help="Only the bookkeeping part.")
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(f"sqlite:///{args.db.resolve()}")
    migrate(engine)
    bookkeeping(engine)
    if not args.rounds_only:
        throughput(engine, args.tasks, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
