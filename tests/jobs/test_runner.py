"""Jobs: counted exactly, cancellable, claimed once, and they survive a SIGKILLed worker."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.job_models import Job, JobTask, RateCall
from app.jobs.options import JobOptions
from app.jobs.queue import create_job, request_cancel
from app.jobs.runner import claim, run_job
from app.models import Attempt, Run, Task
from pipeline.backend import TaskInfo, Verdict
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio

ROOT = Path(__file__).resolve().parents[2]
FAST = RetryPolicy(attempts=2, base_seconds=0.0)


def task_ids(engine: Engine, n: int) -> list[int]:
    with Session(engine) as session:
        rows = session.exec(select(Task.id).where(Task.outcome != "api_failed",
                                                  Task.modality == "chest_xray")
                            .order_by(Task.id).limit(n)).all()
    return [r for r in rows if r is not None]


def test_a_job_counts_every_task_once(demo_engine: Engine, tmp_path: Path) -> None:
    ids = task_ids(demo_engine, 12)
    job_id = create_job(demo_engine, ids, JobOptions(concurrency=4))
    lease = claim(demo_engine, job_id)
    assert lease is not None and lease.job_id == job_id and claim(demo_engine, job_id) is None
    status = aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                                 policy=FAST))
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        runs = session.exec(select(Run).where(Run.origin == "regeneration")).all()
    assert status == "done" and job is not None
    assert (job.done, job.succeeded + job.failed + job.api_failed) == (12, 12)
    assert sorted(r.task_id for r in runs) == sorted(ids)


class CancelsAfterOne(OfflineBackend):
    def __init__(self, engine: Engine, job_id: int) -> None:
        self.engine, self.job_id = engine, job_id

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes, instruction: str) -> Verdict:
        request_cancel(self.engine, self.job_id)
        return await super().judge(task, original, edited, instruction)


def test_cancel_stops_the_job_between_tasks(demo_engine: Engine, tmp_path: Path) -> None:
    ids = task_ids(demo_engine, 10)
    queued = create_job(demo_engine, ids, JobOptions())
    request_cancel(demo_engine, queued)
    assert claim(demo_engine, queued) is None  # a cancelled job is never started
    job_id = create_job(demo_engine, ids, JobOptions(concurrency=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    status = aio.run(run_job(demo_engine, lease, lambda _: CancelsAfterOne(demo_engine, job_id),
                                 tmp_path / "out", policy=FAST))
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        open_runs = session.exec(select(Run).where(Run.outcome == "running")).all()
    assert status == "cancelled" and job is not None and 1 <= job.done < 10
    assert open_runs == []  # runs stopped mid-way are closed as cancelled, not left open


@pytest.mark.slow
def test_a_sigkilled_worker_is_resumed_without_repeats(demo_engine: Engine, tmp_path: Path) -> None:
    ids = task_ids(demo_engine, 40)
    job_id = create_job(demo_engine, ids, JobOptions(concurrency=2))
    env = {**os.environ, "MEDBANANA_DATABASE_URL": demo_engine.url.render_as_string(hide_password=False),
           "MEDBANANA_VAR_DIR": str(tmp_path / "var")}
    command = [sys.executable, "-m", "app.cli", "pipeline", "worker", "--once", "--stale-after", "15"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while True:
        with Session(demo_engine) as session:
            job = session.get(Job, job_id)
            assert job is not None
            if job.done >= 5:
                break
        assert time.monotonic() < deadline and worker.poll() is None
        time.sleep(0.05)
    os.kill(worker.pid, signal.SIGKILL)  # mid-job: some rounds done, some runs half-way
    worker.wait(timeout=10)
    time.sleep(15.2)  # let the job's heartbeat go stale (three heartbeats at least)
    subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=120)
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        statuses = session.exec(select(JobTask.status).where(JobTask.job_id == job_id)).all()
        runs = session.exec(select(Run).where(Run.origin == "regeneration")).all()
        per_round = session.exec(select(Attempt.run_id, Attempt.round, func.count())
                                 .group_by(Attempt.run_id, Attempt.round)).all()
    assert job is not None and job.status == "done" and job.done == job.total == 40
    assert set(statuses) == {"done"}
    assert sorted(r.task_id for r in runs) == sorted(ids)  # one run per task, none orphaned
    assert all(n == 1 for *_, n in per_round)  # no round stored twice
    assert all(r.outcome in ("success", "failed", "api_failed") for r in runs)


def test_readers_comments_steer_a_job_when_asked(demo_engine: Engine, tmp_path: Path) -> None:
    from app.studies.answers import AnswerIn, submit_answer
    from app.studies.models import StudyItem
    from app.studies.worklist import get_assignment
    from pipeline.offline import CURES
    from tests.studies.conftest import make_study

    setup = make_study(demo_engine)
    with Session(demo_engine) as session:
        assignment = get_assignment(session, setup.study, setup.readers[0], 1)
        submit_answer(session, setup.study, assignment, AnswerIn(
            compliance="yes", structure="yes", realism="no", fidelity="yes", overall="reject",
            confidence=4, tags=["unnatural_edge"], comment="stamped on",
            submission_id="steer-000001"))
        item = session.get(StudyItem, assignment.item_id)
        assert item is not None
        task_id = item.task_id

    def first_instruction(use: bool) -> str:
        job_id = create_job(demo_engine, [task_id], JobOptions(rounds=1, use_reader_feedback=use))
        lease = claim(demo_engine, job_id)
        assert lease is not None
        aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                        policy=FAST))
        with Session(demo_engine) as session:
            run_id = session.exec(select(JobTask.run_id).where(JobTask.job_id == job_id)).one()
            attempt = session.exec(select(Attempt).where(Attempt.run_id == run_id)).one()
            return attempt.instruction or ""

    assert CURES["sharp_edge"] in first_instruction(True)
    assert CURES["sharp_edge"] not in first_instruction(False)


def test_stale_after_must_span_several_heartbeats(demo_engine: Engine) -> None:
    from datetime import timedelta

    from typer.testing import CliRunner

    from app.cli import cli
    from app.jobs.runner import MIN_STALE

    with pytest.raises(ValueError, match="at least 15 s"):
        claim(demo_engine, stale_after=timedelta(seconds=3))
    result = CliRunner().invoke(cli, ["pipeline", "worker", "--once", "--stale-after", "3"])
    assert result.exit_code == 2 and "stale-after" in result.output
    assert claim(demo_engine, stale_after=MIN_STALE) is None  # nothing queued; accepted


def test_a_missing_original_ends_its_run_with_the_reason(demo_engine: Engine, tmp_path: Path) -> None:
    from app.models import SourceImage

    [task_id] = task_ids(demo_engine, 1)
    with Session(demo_engine) as session:
        task = session.get(Task, task_id)
        assert task is not None
        source = session.get(SourceImage, task.source_image_id)
        assert source is not None
        source.present = False  # the file went missing after the import
        session.commit()
    job_id = create_job(demo_engine, [task_id], JobOptions(concurrency=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    status = aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                             policy=FAST))
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        [run] = session.exec(select(Run).where(Run.origin == "regeneration")).all()
    assert status == "done" and job is not None and job.api_failed == 1
    assert run.outcome == "api_failed" and run.failure_step == "read_original"
    assert "original image is missing" in (run.failure_error or "")


def test_the_call_timeout_is_set_from_the_cli(demo_engine: Engine, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from app.cli import cli
    from app.jobs.registry import make_backend
    from pipeline.gemini import GeminiBackend

    monkeypatch.setenv("MEDBANANA_DATABASE_URL", demo_engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    # In a thread of its own: the command runs its own event loop, and Playwright's (in the
    # browser tests of the same session) is running in this one.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(CliRunner().invoke, cli, [
            "pipeline", "run", "--modality", "fundus", "--limit", "1", "--rounds", "1",
            "--timeout", "42"]).result()
    assert result.exit_code == 0, result.output
    with Session(demo_engine) as session:
        [options] = session.exec(select(Job.options)).all()
    assert json.loads(options)["timeout_seconds"] == 42
    monkeypatch.setenv("GEMINI_API_KEY", "k" * 39)
    backend = make_backend(JobOptions(backend="gemini", timeout_seconds=42))
    assert isinstance(backend, GeminiBackend) and backend.timeout_seconds == 42
    assert CliRunner().invoke(cli, ["pipeline", "run", "--timeout", "1"]).exit_code == 2


def test_a_failed_write_stops_every_task_of_the_job_and_gives_it_up(
        demo_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails (the database dropped the connection of a worker paused past its
    idle limit) ends the job here: its other tasks are cancelled and awaited, nothing more is
    called or written for it, and the next worker can claim it at once."""
    from sqlalchemy.exc import OperationalError

    from app.jobs import store
    from pipeline.gemini import GeminiBackend
    from tests.fake_gemini import FakeGemini, Reply, cooperative

    def slow(model: str, body: dict[str, Any], n: int) -> Reply:
        reply = cooperative(model, body, n)
        reply.delay = 0.3
        return reply

    real = store.save_round
    saved = {"n": 0}

    def drops(*args: Any, **kwargs: Any) -> int:
        saved["n"] += 1
        if saved["n"] == 1:
            raise OperationalError("UPDATE job", {}, Exception(
                "terminating connection due to idle-session timeout"))
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "save_round", drops)
    job_id = create_job(demo_engine, task_ids(demo_engine, 4),
                        JobOptions(backend="gemini", rounds=3, concurrency=4,
                                   requests_per_minute=1000))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    fake = FakeGemini(slow)
    with fake.serve() as url:
        backend = GeminiBackend("runner-test-key", base_url=url, timeout_seconds=10)

        async def worker() -> tuple[int, int]:
            """The job fails; the worker's event loop lives on, as a real worker's does."""
            with pytest.raises(OperationalError):
                await run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                              policy=RetryPolicy(attempts=1, base_seconds=0.0))
            calls, writes = len(fake.calls), saved["n"]
            await asyncio.sleep(1.5)  # several more rounds of calls, were any task alive
            return len(fake.calls) - calls, saved["n"] - writes

        assert aio.run(worker()) == (0, 0)
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.status == "running" and job.lease == lease.token + 1
    again = claim(demo_engine)  # at once, not after the job's heartbeat went stale
    assert again is not None and again.job_id == job_id
    with Session(demo_engine) as session:
        # The calls cut short hold no place in the quota as if still in flight.
        assert session.exec(select(RateCall).where(RateCall.in_flight == True)).all() == []  # noqa: E712
