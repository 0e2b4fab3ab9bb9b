"""Benchmark: a 500-task job against a fake Gemini server that keeps a real per-minute quota.

    .venv/bin/python benchmarks/quota_run.py [--tasks 500] [--per-minute 600]
        [--server-per-minute N] [--concurrency 32]

The fake server allows --server-per-minute calls per model in any 60 seconds (default: the
same as --per-minute) and answers a call over it with Gemini's 429 (RESOURCE_EXHAUSTED, with
RetryInfo). The job runs with --per-minute as its quota. Goals: no task api_failed, and no
60-second window holding more calls to a model than the server allows. The demo's tasks are
copied (under other disease names) until there are --tasks of them.
"""

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqlmodel import Session, col, select

from app.db import make_engine, migrate
from app.demo.generate import write_demo
from app.importer import import_tree
from app.job_models import Job
from app.jobs.options import JobOptions
from app.jobs.runner import claim, create_job, run_job
from app.models import SourceImage, Task
from pipeline.gemini import GeminiBackend
from tests.fake_gemini import FakeGemini, Quota


def tasks_for(engine: object, wanted: int) -> list[int]:
    """Task ids with an original on disk, the demo's copied until there are ``wanted``."""
    with Session(engine) as session:  # type: ignore[arg-type]
        present = list(session.exec(select(Task).join(
            SourceImage, col(SourceImage.id) == Task.source_image_id)
            .where(col(SourceImage.present).is_(True))).all())
        copies, n = [], 0
        while len(present) + len(copies) < wanted:
            n += 1
            for task in present:
                copies.append(Task(source_image_id=task.source_image_id, dataset=task.dataset,
                                   modality=task.modality, disease=f"{task.disease} copy {n}",
                                   direction=task.direction, task_key=f"{task.task_key}-copy{n}"))
        session.add_all(copies[: max(0, wanted - len(present))])
        session.commit()
        return [t for t in session.exec(select(Task.id).join(
            SourceImage, col(SourceImage.id) == Task.source_image_id)
            .where(col(SourceImage.present).is_(True)).order_by(col(Task.id))
            .limit(wanted)).all() if t is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--per-minute", type=int, default=600)
    parser.add_argument("--server-per-minute", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    server_limit = args.server_per_minute or args.per_minute

    work = Path(tempfile.mkdtemp(prefix="medbanana-quota-"))
    write_demo(work / "demo", size=256)
    engine = make_engine(f"sqlite:///{work / 'quota.db'}")
    migrate(engine)
    import_tree(engine, work / "demo" / "run", work / "demo" / "source")
    ids = tasks_for(engine, args.tasks)
    quota = Quota(server_limit, 60.0)
    job_id = create_job(engine, ids, JobOptions(backend="gemini", concurrency=args.concurrency,
                                                requests_per_minute=args.per_minute))
    lease = claim(engine, job_id)
    assert lease is not None
    start = time.perf_counter()
    with FakeGemini(quota).serve() as url:
        backend = GeminiBackend("quota-benchmark-key", base_url=url, timeout_seconds=60)
        status = asyncio.run(run_job(engine, lease, lambda _: backend, work / "out"))
    wall = time.perf_counter() - start
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
    calls = {model: len(times) for model, times in quota.served.items()}
    print(f"{len(ids)} tasks, job quota {args.per_minute} calls a minute per model, server "
          f"quota {server_limit}, {args.concurrency} tasks at a time: {status} in {wall:.0f} s")
    print(f"  tasks: {job.succeeded} succeeded, {job.failed} failed, {job.api_failed} api_failed")
    print(f"  calls served per model: {calls}; refused with 429: {quota.refused}")
    print(f"  busiest 60 s for one model: {quota.busiest()} calls (server allows {server_limit})")
    # A sliding window lets the first ``limit`` calls go at once, then a window's worth a
    # minute after each: the quota alone sets this floor.
    floor = (math.ceil(max(calls.values()) / server_limit) - 1) * 60
    print(f"  the quota alone needs at least {floor} s for the busiest model")
    met = job.api_failed == 0 and quota.busiest() <= server_limit and status == "done"
    print(f"  goal (0 api_failed, never over the quota): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
