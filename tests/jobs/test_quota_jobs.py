"""A job under Gemini's quotas: 24 tasks against a fake server that enforces a quota per
model, in a shortened "minute" so the test runs in seconds. No task may end api_failed and no
window may hold more calls than the quota allows."""

import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.job_models import Job, JobTask
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.jobs.view import job_summary
from pipeline.gemini import GeminiBackend
from pipeline.loop import RetryPolicy
from tests import aio
from tests.fake_gemini import FakeGemini, Quota
from tests.jobs.test_runner import task_ids

MINUTE, ALLOWED = 2.0, 12


def run_under_quota(engine: Engine, tmp_path: Path, fake: FakeGemini, options: JobOptions,
                    tasks: int = 24) -> Job:
    job_id = create_job(engine, task_ids(engine, tasks), options)
    lease = claim(engine, job_id)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("quota-test-key", base_url=url, timeout_seconds=10)
        # One attempt per call: were a quota refusal counted as a failed attempt, tasks would
        # end api_failed at once.
        aio.run(run_job(engine, lease, lambda _: backend, tmp_path / "out",
                        policy=RetryPolicy(attempts=1, base_seconds=0.1), quota_windows=(MINUTE, 86_400.0)))
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def test_a_job_at_the_quota_finishes_every_task_and_never_exceeds_it(demo_engine: Engine,
                                                                      tmp_path: Path) -> None:
    quota = Quota(ALLOWED, MINUTE)
    options = JobOptions(backend="gemini", concurrency=8, requests_per_minute=ALLOWED, rounds=2)
    job = run_under_quota(demo_engine, tmp_path, FakeGemini(quota), options)
    assert (job.status, job.done, job.api_failed) == ("done", 24, 0)
    assert job.succeeded == 24
    assert quota.busiest() <= ALLOWED
    # The limiter kept to the quota on its own: the server never had to refuse anything.
    assert quota.refused == 0


def test_a_quota_set_equal_to_the_servers_draws_no_429_when_calls_arrive_late(
        demo_engine: Engine, tmp_path: Path) -> None:
    """The service counts a call when it arrives, a while after it was let through (big
    images take time to upload): a call counted from when it was let through would leave
    the window before the service forgets it."""
    # The first burst uploads slowly (the service counts it late); later calls arrive at once.
    quota = Quota(ALLOWED, MINUTE, arrival=lambda n: 0.5 if n <= ALLOWED else 0.0)
    options = JobOptions(backend="gemini", concurrency=8, requests_per_minute=ALLOWED, rounds=2)
    job = run_under_quota(demo_engine, tmp_path, FakeGemini(quota), options, tasks=12)
    assert (job.status, job.done, job.api_failed) == ("done", 12, 0)
    assert quota.refused == 0 and quota.busiest() <= ALLOWED


def test_a_quota_lower_than_configured_is_waited_out_not_failed(demo_engine: Engine,
                                                                 tmp_path: Path) -> None:
    """The project's real quota is below what the job was told: the server's 429s (with
    their RetryInfo delays) make the calls wait, and nothing fails."""
    quota = Quota(6, MINUTE)
    options = JobOptions(backend="gemini", concurrency=8, rounds=2)  # no limit configured
    job = run_under_quota(demo_engine, tmp_path, FakeGemini(quota), options, tasks=12)
    assert (job.status, job.done, job.api_failed) == ("done", 12, 0)
    assert quota.refused > 0 and quota.busiest() <= 6


def test_the_job_page_says_until_when_it_waits_for_quota(demo_engine: Engine, tmp_path: Path) -> None:
    """A daily quota used up: the job shows "waiting for quota until" while its calls wait,
    and carries on by itself afterwards."""
    seen: list[Any] = []
    stop = threading.Event()

    def watch(job_id: int) -> None:
        while not stop.is_set():
            with Session(demo_engine) as session:
                job = session.get(Job, job_id)
                if job is not None and job_summary(job)["waiting_until"] is not None:
                    seen.append(job_summary(job)["waiting_label"])
            time.sleep(0.2)

    job_id = create_job(demo_engine, task_ids(demo_engine, 2), JobOptions(
        backend="gemini", concurrency=2, rounds=1, requests_per_day=2))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    watcher = threading.Thread(target=watch, args=(job_id,))
    watcher.start()
    try:
        with FakeGemini().serve() as url:
            backend = GeminiBackend("quota-test-key", base_url=url, timeout_seconds=10)
            # A "day" of 7 s: the third call to a model waits longer than a wait is shown.
            status = aio.run(run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                                     policy=RetryPolicy(attempts=1), quota_windows=(1.0, 7.0)))
    finally:
        stop.set()
        watcher.join()
    assert status == "done"
    assert seen and all(label.endswith("UTC") for label in seen)
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.api_failed == 0 and job.waiting_until is None
        assert all(t.status == "done" for t in session.exec(
            select(JobTask).where(JobTask.job_id == job_id)).all())


def test_the_quota_wait_has_a_configurable_ceiling(demo_engine: Engine, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A 429 asking for 30 s, under a job whose ceiling is 1 s: the call is tried again after
    about a second (and would simply wait again if refused again)."""
    from typing import Any

    from tests.fake_gemini import Reply, cooperative, quota_error

    def refuses_first(model: str, body: dict[str, Any], n: int) -> Reply:
        return quota_error("30s") if n == 1 else cooperative(model, body, n)

    with caplog.at_level(logging.INFO, logger="pipeline.loop"):
        job = run_under_quota(demo_engine, tmp_path, FakeGemini(refuses_first), JobOptions(
            backend="gemini", rounds=1, max_quota_wait=1.0), tasks=1)
    assert (job.status, job.succeeded, job.api_failed) == ("done", 1, 0)
    waits = [float(m.group(1)) for r in caplog.records
             if (m := re.search(r"quota used up; waiting ([\d.]+) s", r.getMessage()))]
    # Each model's first call was refused: the 30 s asked for, capped at 1 s (plus at most
    # a fifth of jitter).
    assert len(waits) == 2 and all(1.0 <= w <= 1.2 for w in waits), waits


def test_a_promoted_judge_counts_each_call_under_its_own_model(demo_engine: Engine,
                                                               tmp_path: Path) -> None:
    """With a promoted candidate every call was counted under "gemini": the job's quota of
    N per minute throttled all its calls together, and other jobs never saw them."""
    from app.job_models import RateCall
    from app.judges.candidates import CandidatePlan, create_candidate
    from app.judges.promotion import promote
    from pipeline.judge_spec import default_template

    with Session(demo_engine) as session:
        chosen = create_candidate(session, CandidatePlan(
            name="flash judge", backend="gemini", model="gemini-2.5-flash",
            template=default_template()), created_by=None)
        chosen_id = chosen.id
        promote(session, chosen_id, None)
    fake = FakeGemini()
    options = JobOptions(backend="gemini", concurrency=2, requests_per_minute=1000, rounds=1,
                         judge_candidate_id=chosen_id)
    job = run_under_quota(demo_engine, tmp_path, fake, options, tasks=2)
    assert job.status == "done"
    with Session(demo_engine) as session:
        counted = {c.model for c in session.exec(select(RateCall))}
    backend = GeminiBackend("k")
    assert counted == {backend.models["instruction"], backend.models["edit"], "gemini-2.5-flash"}


def test_a_job_keeps_to_the_servers_quota_and_may_ask_for_less() -> None:
    from app.settings import Settings

    server = Settings(gemini_requests_per_minute=60, gemini_tokens_per_minute=10_000)
    assert JobOptions().within(server).quota() == JobOptions(
        requests_per_minute=60, tokens_per_minute=10_000).quota()
    lower = JobOptions(requests_per_minute=10, requests_per_day=500).within(server)
    assert (lower.requests_per_minute, lower.requests_per_day, lower.tokens_per_minute) == (
        10, 500, 10_000)
    higher = JobOptions(requests_per_minute=600).within(server)
    assert higher.requests_per_minute == 60
    assert JobOptions().within(Settings()).quota().limited is False
