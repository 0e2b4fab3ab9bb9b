"""Regenerate tasks the way a worker does, with the offline backend, in the test itself: a
second run for each task, for the tests that compare runs."""

from pathlib import Path

from sqlalchemy.engine import Engine

from app.jobs import JobOptions, claim, create_job, make_backend, run_job
from pipeline.loop import RetryPolicy
from tests import aio


def regenerate_offline(engine: Engine, task_ids: list[int], work: Path, rounds: int = 2) -> None:
    create_job(engine, task_ids, JobOptions(backend="offline", rounds=rounds))
    lease = claim(engine)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda o: make_backend(o), work,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
