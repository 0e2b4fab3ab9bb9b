"""Batch mode: rounds and re-judges through the Batch API (the real google-genai client
against a fake of the batch endpoints), stored exactly as interactive ones, resumed after
a takeover without submitting anything twice, and expired batches made up interactively."""

import asyncio
import json
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.images.files import ImageKind, resolve_image
from app.job_models import Job, JobBatch, JobTask
from app.jobs.batch_records import job_batches
from app.jobs.lease import Lease
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import MIN_STALE, claim, run_job
from app.models import Attempt, JudgeVerdict, Run, utcnow
from pipeline.gemini import GeminiBackend
from pipeline.loop import RetryPolicy
from tests import aio
from tests.fake_gemini import (
    VERDICT,
    Batch,
    FakeGemini,
    Reply,
    Tagger,
    cooperative,
    error_reply,
    image_tag,
    is_judge_batch,
    text_reply,
)
from tests.jobs.test_runner import task_ids

QUICK = RetryPolicy(attempts=2, base_seconds=0.0)


def batch_options(**changes: Any) -> JobOptions:
    return JobOptions(backend="gemini", mode="batch", batch_poll_seconds=0.05, **changes)


def run(engine: Engine, tmp_path: Path, fake: FakeGemini, job_id: int) -> str:
    lease = claim(engine, job_id)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        return aio.run(run_job(engine, lease, lambda _: backend, tmp_path / "out", policy=QUICK))


def worker_with_a_batch(engine: Engine, lease: Lease, backend: GeminiBackend, fake: FakeGemini,
                        tmp_path: Path, result: dict[str, Any],
                        until: Callable[[Batch], bool] = lambda _: True) -> threading.Thread:
    """A worker running the job in a thread of its own, once it has submitted a batch that
    ``until`` picks (its first, unless told), and the batch's name is recorded; its final
    status goes into ``result``."""
    worker = threading.Thread(target=lambda: result.update(status=asyncio.run(run_job(
        engine, lease, lambda _: backend, tmp_path / "out", policy=QUICK))))
    worker.start()
    deadline = time.monotonic() + 20
    while not any(until(b) for b in list(fake.batches.values())) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # its name is recorded
    return worker


def take_over(engine: Engine, job_id: int) -> Lease:
    """The job's worker goes silent; another claims the job."""
    with Session(engine) as session:
        session.execute(update(Job).where(col(Job.id) == job_id).values(
            heartbeat_at=utcnow() - timedelta(hours=1)))
        session.commit()
    lease = claim(engine, stale_after=MIN_STALE)
    assert lease is not None
    return lease


def test_a_batch_regeneration_is_stored_like_an_interactive_one(demo_engine: Engine,
                                                                tmp_path: Path) -> None:
    verdicts = iter(range(1, 100))

    def judge_twice(model: str, body: dict[str, Any], n: int) -> Reply:
        if body.get("generationConfig", {}).get("responseMimeType") == "application/json":
            # Three tasks: the first three verdicts (round 1) reject, the rest accept.
            return text_reply(json.dumps(VERDICT | {"qualified": next(verdicts) > 3}))
        return cooperative(model, body, n)

    fake = FakeGemini(judge_twice)
    job_id = create_job(demo_engine, task_ids(demo_engine, 3), batch_options(rounds=3))
    assert run(demo_engine, tmp_path, fake, job_id) == "done"
    assert len(fake.calls) == fake.batched == 3 * 3 * 2  # no direct call at all
    # Two waves of three batches: instructions, edits, verdicts.
    assert len(fake.batches) == 6
    assert {(b.model, len(b.requests)) for b in fake.batches.values()} == {
        ("gemini-2.5-pro", 3), ("gemini-2.5-flash-image", 3)}
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and (job.done, job.succeeded, job.api_failed) == (3, 3, 0)
        runs = session.exec(select(Run).where(Run.origin == "regeneration")).all()
        assert sorted((r.outcome, r.n_rounds, r.success_round) for r in runs) == [
            ("success", 2, 2)] * 3
        attempts = session.exec(select(Attempt).join(Run).where(
            Run.origin == "regeneration")).all()
        assert len(attempts) == 6 and all(a.image_present for a in attempts)
        calls = [json.loads(a.calls or "{}") for a in attempts]
        assert {c["mode"] for c in calls} == {"batch"}
        assert all(c["judge"]["thinking_tokens"] == 1500 for c in calls)
        verdicts = session.exec(select(JudgeVerdict).join(Attempt).join(Run).where(
            Run.origin == "regeneration")).all()
        assert sorted(v.qualified for v in verdicts) == [False] * 3 + [True] * 3
        batches = job_batches(session, job_id)
        assert {b.state for b in batches} == {"JOB_STATE_SUCCEEDED"}
        assert all(b.name and b.name.startswith("batches/") for b in batches)
    # The second wave's instructions were written from the first round's history.
    second = [b for b in fake.batches.values() if b.model == "gemini-2.5-pro"][2]
    assert "round" in json.dumps(second.requests[0]["request"]).lower()


def test_expired_and_failed_answers_are_made_up_interactively(demo_engine: Engine,
                                                               tmp_path: Path) -> None:
    def edits_expire(batch: Batch) -> str:
        return "BATCH_STATE_EXPIRED" if "image" in batch.model else "BATCH_STATE_SUCCEEDED"

    fake = FakeGemini(batch_end=edits_expire)
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    assert run(demo_engine, tmp_path, fake, job_id) == "done"
    direct = [model for model, _, _ in fake.calls[fake.batched:]]
    assert fake.batched == 4 and sorted(m for m, *_ in fake.calls if "image" in m) == [
        "gemini-2.5-flash-image"] * 2
    assert len(fake.calls) == 6 and direct.count("gemini-2.5-flash-image") <= 2
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and (job.succeeded, job.api_failed) == (2, 0)
        states = sorted(b.state for b in job_batches(session, job_id))
    assert states == ["JOB_STATE_EXPIRED", "JOB_STATE_SUCCEEDED", "JOB_STATE_SUCCEEDED"]


def test_a_blocked_batch_answer_ends_the_run_blocked_without_retrying(demo_engine: Engine,
                                                                      tmp_path: Path) -> None:
    def blocks_edits(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            return Reply(body={"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
        return cooperative(model, body, n)

    fake = FakeGemini(blocks_edits)
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=2))
    assert run(demo_engine, tmp_path, fake, job_id) == "done"
    assert len(fake.calls) == fake.batched == 4  # two instructions, two blocked edits
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and (job.blocked, job.failed, job.api_failed) == (2, 0, 0)
        runs = session.exec(select(Run).where(Run.origin == "regeneration")).all()
        assert {(r.outcome, r.failure_step) for r in runs} == {("blocked", "edit_image")}


def test_a_worker_taking_over_polls_the_batches_and_never_submits_again(demo_engine: Engine,
                                                                       tmp_path: Path) -> None:
    fake = FakeGemini(batch_polls=10**9)  # the first worker's batch never ends
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    first = claim(demo_engine, job_id)
    assert first is not None
    result: dict[str, Any] = {}
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        worker = worker_with_a_batch(demo_engine, first, backend, fake, tmp_path, result)
        assert len(fake.batches) == 1
        # The first worker goes silent; another takes the job over and batches now end.
        second = take_over(demo_engine, job_id)
        fake.batch_polls = 0
        status = aio.run(run_job(demo_engine, second, lambda _: backend, tmp_path / "out",
                                 policy=QUICK))
        worker.join(20)
    assert status == "done" and result["status"] == "displaced"
    # One batch per step: the instruction batch was found again, not submitted again.
    assert len(fake.batches) == 3 and fake.batched == 6
    with Session(demo_engine) as session:
        assert len(session.exec(select(JobBatch)).all()) == 3
        assert len(session.exec(select(Attempt).join(Run).where(
            Run.origin == "regeneration")).all()) == 2
        assert all(t.status == "done" for t in session.exec(select(JobTask)).all())


def test_a_batch_rejudge_of_the_demo_round_trips(demo_engine: Engine, tmp_path: Path) -> None:
    fake = FakeGemini()
    ids = task_ids(demo_engine, 5)
    with Session(demo_engine) as session:
        before = len(session.exec(select(JudgeVerdict)).all())
    job_id = create_job(demo_engine, ids, batch_options(kind="rejudge", rejudge_times=2))
    assert run(demo_engine, tmp_path, fake, job_id) == "done"
    assert len(fake.batches) == 2 and fake.batched == len(fake.calls) == 10
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and (job.done, job.succeeded) == (5, 5)
        assert len(session.exec(select(JudgeVerdict)).all()) == before + 10
        assert {b.state for b in job_batches(session, job_id)} == {"APPLIED"}
    # A worker that stopped after storing the verdicts but before counting the tasks: the
    # next one finds both passes applied, stores nothing twice and submits nothing.
    with Session(demo_engine) as session:
        session.execute(update(JobTask).values(status="pending"))
        session.execute(update(Job).values(status="running", done=0, succeeded=0,
                                           heartbeat_at=utcnow() - timedelta(hours=1)))
        session.commit()
    lease = claim(demo_engine, stale_after=MIN_STALE)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        assert aio.run(run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                               policy=QUICK)) == "done"
    assert len(fake.batches) == 2 and len(fake.calls) == 10
    with Session(demo_engine) as session:
        assert len(session.exec(select(JudgeVerdict)).all()) == before + 10
        job = session.get(Job, job_id)
        assert job is not None and (job.done, job.succeeded) == (5, 5)


def test_a_batch_submitted_but_not_yet_named_is_found_by_its_display_name(
        demo_engine: Engine, tmp_path: Path) -> None:
    """A worker stopped between submitting a batch and recording its name: the next one
    finds it at the API under the recorded display name, and submits nothing again."""
    from app.jobs.batch_records import record as _record
    from pipeline.gemini_batch import Batches

    fake = FakeGemini()
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    with Session(demo_engine) as session:
        job_tasks = session.exec(select(JobTask).where(JobTask.job_id == job_id)).all()
    keys = [f"{t.id}:1" for t in job_tasks]
    # What they carried is unknown here: their answers are asked again, never trusted.
    record = _record(demo_engine, lease, 1, "instruction", 0, "gemini-2.5-pro", keys,
                     {k: "" for k in keys})
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        request = backend.edit_request(b"\xff\xd8\xff", "any")  # the fake answers any request
        aio.run(Batches(backend).submit("instruction", [request, request], keys,
                                        record.display_name))
        with Session(demo_engine) as session:
            session.execute(update(Job).values(heartbeat_at=utcnow() - timedelta(hours=1)))
            session.commit()
        second = claim(demo_engine, stale_after=MIN_STALE)
        assert second is not None
        assert aio.run(run_job(demo_engine, second, lambda _: backend, tmp_path / "out",
                               policy=QUICK)) == "done"
    assert len(fake.batches) == 3
    with Session(demo_engine) as session:
        found = session.get(JobBatch, record.id)
        assert found is not None and found.name == "batches/fake00001"


def test_the_job_page_lists_the_batches(client: Any, demo_engine: Engine, tmp_path: Path) -> None:
    from bs4 import BeautifulSoup

    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    assert run(demo_engine, tmp_path, FakeGemini(), job_id) == "done"
    page = BeautifulSoup(client.get(f"/jobs/{job_id}").text, "html.parser")
    rows = [[td.get_text() for td in tr.select("td")] for tr in page.select("#job-batches tbody tr")]
    assert [(r[1], r[3], r[4]) for r in rows] == [("instruction", "2", "succeeded"),
                                                  ("edit", "2", "succeeded"),
                                                  ("judge", "2", "succeeded")]
    assert all(r[2].startswith("batches/") for r in rows)
    # Batch mode is Gemini's: refused for the offline backend, in the form and the CLI.
    refused = client.post("/jobs", data={"task": "1", "backend": "offline", "mode": "batch"})
    assert refused.status_code == 422


def test_the_cli_refuses_batch_mode_without_gemini() -> None:
    from typer.testing import CliRunner

    from app.cli import cli

    result = CliRunner().invoke(cli, ["pipeline", "run", "--mode", "batch", "--estimate"])
    assert result.exit_code == 2 and "--mode batch needs --backend gemini" in result.output


def test_cancelling_a_batch_job_cancels_its_batch(demo_engine: Engine, tmp_path: Path) -> None:
    from app.jobs.queue import request_cancel

    fake = FakeGemini(batch_polls=10**9)  # never ends by itself
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    result: dict[str, Any] = {}
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        worker = worker_with_a_batch(demo_engine, lease, backend, fake, tmp_path, result)
        request_cancel(demo_engine, job_id)
        worker.join(30)  # the heartbeat sees the cancel within 5 s
    assert result["status"] == "cancelled"
    assert [b.state for b in fake.batches.values()] == ["BATCH_STATE_CANCELLED"]
    assert fake.batched == 0


@pytest.mark.parametrize(("edit_batch", "issued", "stored"), [
    ("item error", 3, ["tag-000001", "tag-000003"]),  # B in the batch; A: E1, then E2
    ("BATCH_STATE_EXPIRED", 4, ["tag-000003", "tag-000004"]),  # every edit made twice
    ("BATCH_STATE_FAILED", 4, ["tag-000003", "tag-000004"]),
])
def test_a_verdict_is_never_stored_with_an_edit_made_again_after_a_restart(
        demo_engine: Engine, tmp_path: Path, edit_batch: str, issued: int,
        stored: list[str]) -> None:
    """The judge batch was sent with edit E1 of a task whose batch edit came back as an item
    error (or whose edit batch failed or expired); the worker stops while that batch runs,
    and the next one makes the edit again (E2). The batch's verdict is about E1: it is
    dropped and E2 judged."""
    tagger = Tagger()

    def first_edit_fails(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model and n == 1 and edit_batch == "item error":
            return error_reply(500, "Internal error encountered.", "INTERNAL")
        return tagger(model, body, n)

    def edit_batch_ends(batch: Batch) -> str:
        return (edit_batch if "image" in batch.model and edit_batch != "item error"
                else "BATCH_STATE_SUCCEEDED")

    judging = threading.Event()
    fake = FakeGemini(first_edit_fails, batch_end=edit_batch_ends,
                      hold=lambda b: is_judge_batch(b) and judging.is_set())
    judging.set()
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), batch_options(rounds=1))
    first = claim(demo_engine, job_id)
    assert first is not None
    result: dict[str, Any] = {}
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        worker = worker_with_a_batch(demo_engine, first, backend, fake, tmp_path, result,
                                     until=is_judge_batch)
        with Session(demo_engine) as session:
            assert session.exec(select(JobBatch).where(JobBatch.step == "judge")).one().name
        # The first worker goes silent while its judge batch runs; another takes over.
        second = take_over(demo_engine, job_id)
        judging.clear()
        status = aio.run(run_job(demo_engine, second, lambda _: backend, tmp_path / "out",
                                 policy=QUICK))
        worker.join(20)
    assert status == "done" and result["status"] == "displaced"
    assert tagger.issued == issued
    with Session(demo_engine) as session:
        rows = session.exec(select(Attempt, JudgeVerdict).join(
            JudgeVerdict, col(JudgeVerdict.attempt_id) == Attempt.id).join(Run).where(
            Run.origin == "regeneration")).all()
        assert len(rows) == 2
        tags = []
        for attempt, verdict in rows:
            data = resolve_image(session, ImageKind.attempt, attempt.id or 0).path.read_bytes()
            tags.append(image_tag(data))
            assert verdict.reason == f"judged {tags[-1]}"
    assert sorted(tags) == stored  # no edit the first worker made was stored
