"""A candidate judge scored through the Batch API (the real google-genai client against the
fake of the batch endpoints): one batch to the candidate's own model, every answer stored as
an interactive one, a batch's error made up interactively, and a worker taking over the job
polls the batch again instead of submitting it twice."""

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import Conflict, Invalid
from app.job_models import Job, JobBatch, RateCall
from app.jobs import claim, run_job, start_scoring
from app.judges.board import leaderboard
from app.judges.candidates import CandidatePlan, create_candidate
from app.judges.models import CandidateVerdict, JudgeCandidate
from app.settings import Settings
from pipeline.gemini import GeminiBackend
from pipeline.judge_spec import default_template
from tests import aio
from tests.fake_gemini import VERDICT, FakeGemini, Reply, error_reply, text_reply
from tests.jobs.test_batch_jobs import QUICK, take_over, worker_with_a_batch
from tests.reference_study import Reference, candidate

KEYED = Settings(gemini_api_key="batch-test-key")
ASKED = 16 * 2  # the reference's 16 edits: once in the usual order, once with the original first


def flash(engine: Engine) -> JudgeCandidate:
    with Session(engine) as session:
        return create_candidate(session, CandidatePlan(
            name="flash judge", backend="gemini", model="gemini-2.5-flash",
            template=default_template(), temperature=0.0), None)


def batch_job(engine: Engine, candidate_id: int, study_id: int) -> int:
    job_id = start_scoring(engine, candidate_id, study_id, KEYED, mode="batch")
    with Session(engine) as session:  # polled quickly here; every 30 s on a server
        job = session.get(Job, job_id)
        assert job is not None
        # A quota kept, so that a call made up interactively is seen counted.
        options = json.loads(job.options) | {"batch_poll_seconds": 0.05,
                                             "requests_per_minute": 1000}
        session.execute(update(Job).where(col(Job.id) == job_id).values(options=json.dumps(options)))
        session.commit()
    return job_id


def passes_all_but_the_first(model: str, body: dict[str, Any], n: int) -> Reply:
    """Every verdict passes; the batch's first request is answered with a server error."""
    if n == 1:
        return error_reply(500, "Internal error encountered.", "INTERNAL")
    return text_reply(json.dumps(VERDICT | {"qualified": True}))


def test_a_batch_scoring_stores_every_answer_and_makes_up_an_error(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    judge = flash(demo_engine)
    job_id = batch_job(demo_engine, judge.id or 0, reference.study_id)
    fake = FakeGemini(passes_all_but_the_first)
    lease = claim(demo_engine, job_id)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        assert aio.run(run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                               policy=QUICK)) == "done"
    [batch] = fake.batches.values()
    assert batch.model == "gemini-2.5-flash" and len(batch.requests) == ASKED
    # The candidate's own settings went with each request.
    assert all(r["request"]["generationConfig"]["temperature"] == 0.0 for r in batch.requests)
    assert fake.batched == ASKED and len(fake.calls) == ASKED + 1  # the error, asked directly
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.done == job.total and job.api_failed == 0
        rows = session.exec(select(CandidateVerdict).where(
            col(CandidateVerdict.candidate_id) == judge.id)).all()
        assert len(rows) == ASKED and all(r.error is None and r.qualified for r in rows)
        assert sum(r.original_first for r in rows) == 16
        board = leaderboard(session, reference.study_id, resamples=200, questions=("overall",))
        assert "flash judge" in {r.name for r in board["overall"].rows}
        assert [b.state for b in session.exec(select(JobBatch)).all()] == ["JOB_STATE_SUCCEEDED"]
        # The call made up interactively went through the candidate's model's quota.
        counted = session.execute(select(col(RateCall.model), func.count())
                                  .group_by(col(RateCall.model))).all()
        assert [tuple(row) for row in counted] == [("gemini-2.5-flash", 1)]


def test_a_worker_taking_over_a_batch_scoring_never_submits_it_again(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    judge = flash(demo_engine)
    job_id = batch_job(demo_engine, judge.id or 0, reference.study_id)
    fake = FakeGemini(lambda *_: text_reply(json.dumps(VERDICT)), batch_polls=10**9)
    first = claim(demo_engine, job_id)
    assert first is not None
    result: dict[str, Any] = {}
    with fake.serve() as url:
        backend = GeminiBackend("batch-test-key", base_url=url, timeout_seconds=10)
        worker = worker_with_a_batch(demo_engine, first, backend, fake, tmp_path, result)
        second = take_over(demo_engine, job_id)
        fake.batch_polls = 0
        status = aio.run(run_job(demo_engine, second, lambda _: backend, tmp_path / "out",
                                 policy=QUICK))
        worker.join(20)
    assert status == "done" and result["status"] == "displaced"
    assert len(fake.batches) == 1 and len(fake.calls) == fake.batched == ASKED
    with Session(demo_engine) as session:
        stored = session.scalar(select(func.count()).select_from(CandidateVerdict).where(
            col(CandidateVerdict.candidate_id) == judge.id))
    assert stored == ASKED


def test_the_batch_api_is_for_gemini_candidates_only(demo_engine: Engine,
                                                     reference: Reference) -> None:
    lenient = candidate(demo_engine, "lenient", "lenient")
    with pytest.raises(Conflict, match="Batch API is Gemini's"):
        start_scoring(demo_engine, lenient.id or 0, reference.study_id, KEYED, mode="batch")
    with pytest.raises(Invalid, match="the mode is one of"):
        start_scoring(demo_engine, lenient.id or 0, reference.study_id, KEYED, mode="fast")
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0
