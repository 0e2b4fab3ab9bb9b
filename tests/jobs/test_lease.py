"""Leases: a worker that lost its job to another writes nothing when it wakes."""

import asyncio
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.images.files import ImageKind, resolve_image
from app.job_models import Job, JobTask
from app.jobs import store
from app.jobs.lease import Displaced
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import DISPLACED, MIN_STALE, claim, run_job
from app.models import Attempt, Run, utcnow
from pipeline.backend import Edit, TaskInfo
from pipeline.offline import OfflineBackend
from pipeline.ports import Round
from pipeline.vocabulary import Outcome
from tests import aio
from tests.jobs.test_runner import FAST, task_ids
from tests.reference_study import Reference


class StallsOnFirstEdit(OfflineBackend):
    """Edits like the offline backend, but its first edit waits until released: a worker
    paused in the middle of a round."""

    def __init__(self) -> None:
        super().__init__()
        self.stalled, self.release = threading.Event(), threading.Event()

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        if not self.stalled.is_set():
            self.stalled.set()
            await asyncio.to_thread(self.release.wait, 30)
        return await super().edit(task, original, instruction)


def _age_heartbeat(engine: Engine, job_id: int) -> None:
    with Session(engine) as session:
        session.execute(update(Job).where(col(Job.id) == job_id)
                        .values(heartbeat_at=utcnow() - timedelta(hours=1)))
        session.commit()


def test_a_displaced_worker_writes_nothing_when_it_wakes(demo_engine: Engine, tmp_path: Path) -> None:
    ids = task_ids(demo_engine, 3)
    job_id = create_job(demo_engine, ids, JobOptions(concurrency=1, rounds=2))
    first = claim(demo_engine, job_id)
    assert first is not None
    stalled = StallsOnFirstEdit()
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(status=asyncio.run(run_job(
        demo_engine, first, lambda _: stalled, tmp_path / "out", policy=FAST))))
    worker.start()
    assert stalled.stalled.wait(30)

    # The first worker went silent: another takes the job over and finishes it.
    _age_heartbeat(demo_engine, job_id)
    second = claim(demo_engine, stale_after=MIN_STALE)
    assert second is not None and second.job_id == job_id and second.token == first.token + 1
    assert aio.run(run_job(demo_engine, second, lambda _: OfflineBackend(), tmp_path / "out",
                           policy=FAST)) == "done"
    with Session(demo_engine) as session:
        before = [(a.id, a.image_relpath) for a in session.exec(select(Attempt).order_by(
            col(Attempt.id))).all()]

    stalled.release.set()  # the first worker wakes with a finished edit in hand
    worker.join(30)
    assert result["status"] == DISPLACED
    with Session(demo_engine) as session:
        after = [(a.id, a.image_relpath) for a in session.exec(select(Attempt).order_by(
            col(Attempt.id))).all()]
        job = session.get(Job, job_id)
        regenerated = session.exec(select(Attempt).join(Run).where(
            Run.origin == "regeneration")).all()
        runs_of_job = session.exec(select(JobTask.run_id).where(JobTask.job_id == job_id)).all()
        # Every stored round's image is on disk, and no file is left that no round names.
        named = {resolve_image(session, ImageKind.attempt, a.id or 0).path
                 for a in regenerated if a.image_present}
    assert after == before
    assert job is not None and job.status == "done" and job.done == 3 and job.lease == second.token
    assert {a.run_id for a in regenerated} == set(runs_of_job)
    on_disk = {p.resolve() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert on_disk == {p.resolve() for p in named} and all(p.exists() for p in named)


def test_every_write_of_a_job_checks_its_lease(demo_engine: Engine, tmp_path: Path) -> None:
    [task_id] = task_ids(demo_engine, 1)
    job_id = create_job(demo_engine, [task_id], JobOptions())
    first = claim(demo_engine, job_id)
    assert first is not None
    with Session(demo_engine) as session:
        job_task = session.exec(select(JobTask).where(JobTask.job_id == job_id)).one()
    run_id = store.start_run(demo_engine, task_id, job_task.id, first)
    _age_heartbeat(demo_engine, job_id)
    assert claim(demo_engine, stale_after=MIN_STALE) is not None
    root_id = store.output_root(demo_engine, tmp_path / "out")
    item = Round(number=1, instruction="x", instruction_thinking="", image=b"\xff\xd8\xff",
                       edit_error=None, verdict=None, verdict_error=None, judge_thinking="",
                       judge_model=None, prompt_version=None, raw="", calls={})
    with pytest.raises(Displaced):
        store.start_run(demo_engine, task_id, job_task.id, first)
    with pytest.raises(Displaced):
        store.save_round(demo_engine, run_id, root_id, tmp_path / "out", item, first)
    with pytest.raises(Displaced):
        store.finish_run(demo_engine, run_id, Outcome.failed, lease=first)
    with Session(demo_engine) as session:
        assert session.exec(select(Attempt).where(Attempt.run_id == run_id)).all() == []
        run = session.get(Run, run_id)
        assert run is not None and run.outcome == "running"
    assert [p for p in (tmp_path / "out").rglob("*") if p.is_file()] == []


@pytest.mark.postgres
def test_a_worker_stalled_inside_a_write_does_not_block_a_takeover(pg_engine: Engine,
                                                                   demo_dir: Path) -> None:
    """A worker paused while it held its job's row: another worker's claim gives up after a
    moment instead of waiting for ever, and the server ends the stalled transaction."""

    from sqlalchemy import text

    from app.importer import import_tree

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    [task_id] = task_ids(pg_engine, 1)
    job_id = create_job(pg_engine, [task_id], JobOptions())
    first = claim(pg_engine, job_id)
    assert first is not None
    _age_heartbeat(pg_engine, job_id)
    stalled = Session(pg_engine)
    first.hold(stalled)  # the row is locked; the worker then stops before committing
    timeout = stalled.execute(text("SHOW idle_in_transaction_session_timeout")).scalar()
    try:
        assert claim(pg_engine, stale_after=MIN_STALE) is None
        # It skipped the locked row: the stalled transaction is still there, holding it
        # (had the claim waited for it, the server would have ended it after 20 s).
        assert timeout == "20s"
        assert stalled.execute(text("SELECT 1")).scalar() == 1
    finally:
        stalled.rollback()
        stalled.close()
    assert claim(pg_engine, stale_after=MIN_STALE) is not None  # once the lock is gone


def _take_over(engine: Engine, job_id: int) -> None:
    with Session(engine) as session:
        session.execute(update(Job).where(col(Job.id) == job_id).values(lease=Job.lease + 1))
        session.commit()


def test_a_displaced_worker_makes_no_further_call(demo_engine: Engine) -> None:
    """It kept calling Gemini after it had logged that it lost the job (8 calls in 2 s)."""
    from app.job_models import RateCall
    from app.jobs.rate_limit import CallLimiter, Quota

    job_id = create_job(demo_engine, task_ids(demo_engine, 1), JobOptions(backend="gemini"))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    limited = CallLimiter(demo_engine, Quota(per_minute=100), job_id, lease=lease)
    unlimited = CallLimiter(demo_engine, Quota(), job_id, record=True, lease=lease)
    quiet = CallLimiter(demo_engine, Quota(), job_id, lease=lease)
    assert aio.run(limited.acquire("gemini-2.5-pro")) is not None  # still its own
    _take_over(demo_engine, job_id)
    for limiter in (limited, unlimited, quiet):
        with pytest.raises(Displaced):
            aio.run(limiter.acquire("gemini-2.5-pro"))
    with Session(demo_engine) as session:
        assert len(session.exec(select(RateCall)).all()) == 1


def test_a_displaced_scoring_job_stores_no_answer(demo_engine: Engine, reference: Reference) -> None:
    from app.judges.candidates import get_candidate
    from app.judges.models import CandidateVerdict
    from app.judges.scoring import offline_judge, pending_tasks, score_task
    from tests.reference_study import candidate

    fair = candidate(demo_engine, "fair")
    with Session(demo_engine) as session:
        task_id = pending_tasks(session, get_candidate(session, fair.id or 0),
                                reference.study_id)[0]
    job_id = create_job(demo_engine, [task_id], JobOptions(kind="score"))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    _take_over(demo_engine, job_id)
    with pytest.raises(Displaced):
        aio.run(score_task(demo_engine, fair.id or 0, reference.study_id, task_id,
                           offline_judge, hold=lease.hold))
    with Session(demo_engine) as session:
        assert session.exec(select(CandidateVerdict)).all() == []
