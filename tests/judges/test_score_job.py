"""Scoring as a job: one unit per task, run by the job runner like any other job, resumable,
and refused before anything exists when there is nothing to ask or no key."""

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import Conflict
from app.job_models import Job, JobStatus
from app.jobs import JobOptions, claim, make_backend, run_job, start_scoring
from app.judges.board import leaderboard
from app.judges.candidates import CandidatePlan, create_candidate, rubric_version, spec_of
from app.judges.models import CandidateVerdict, JudgeCandidate
from app.settings import Settings
from pipeline.judge_spec import default_template
from pipeline.loop import RetryPolicy
from tests import aio
from tests.reference_study import Reference, candidate

QUICK = RetryPolicy(attempts=2, base_seconds=0.0)


def run(engine: Engine, tmp_path: Path) -> str:
    lease = claim(engine)
    assert lease is not None

    def backend(options: JobOptions):  # type: ignore[no-untyped-def]
        return make_backend(options, Settings(gemini_api_key=""))

    return aio.run(run_job(engine, lease, backend, tmp_path / "out", policy=QUICK))


def test_a_scoring_job_stores_every_answer_once(demo_engine: Engine, reference: Reference,
                                               tmp_path: Path) -> None:
    lenient = candidate(demo_engine, "lenient", "lenient", repeats=2)
    settings = Settings(gemini_api_key="")
    job_id = start_scoring(demo_engine, lenient.id or 0, reference.study_id, settings)
    assert run(demo_engine, tmp_path) == JobStatus.done
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.kind == "score" and job.done == job.total > 0
        stored = session.scalar(select(func.count()).select_from(CandidateVerdict))
        assert stored == 16 * 3  # 16 edits: two repeats, and once with the original first
        rows = {r.name for r in leaderboard(session, reference.study_id, resamples=200)["overall"].rows}
    assert "lenient" in rows
    with pytest.raises(Conflict, match="nothing left to ask"):
        start_scoring(demo_engine, lenient.id or 0, reference.study_id, settings)


def test_a_gemini_candidate_without_a_key_starts_nothing(demo_engine: Engine,
                                                        reference: Reference) -> None:
    with Session(demo_engine) as session:
        pro = create_candidate(session, CandidatePlan(
            name="pro", backend="gemini", model="gemini-2.5-pro", template=default_template()), None)
    with pytest.raises(Conflict, match="no key"):
        start_scoring(demo_engine, pro.id or 0, reference.study_id, Settings(gemini_api_key=""))
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0


def test_a_gemini_scoring_job_counts_its_calls_against_the_candidates_model(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    import json

    from sqlmodel import col

    from app.job_models import RateCall
    from pipeline.gemini import GeminiBackend
    from tests.fake_gemini import VERDICT, FakeGemini, text_reply

    with Session(demo_engine) as session:
        flash = create_candidate(session, CandidatePlan(
            name="flash", backend="gemini", model="gemini-2.5-flash", template=default_template()),
            None)
    # The server's quota reaches scoring jobs: they drew 429s beside a regeneration at it.
    job_id = start_scoring(demo_engine, flash.id or 0, reference.study_id,
                           Settings(gemini_api_key="quota-test-key", gemini_requests_per_minute=1000))
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        assert json.loads(job.options)["requests_per_minute"] == 1000
    fake = FakeGemini(lambda *_: text_reply(json.dumps(VERDICT)))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    with fake.serve() as url:
        backend = GeminiBackend("quota-test-key", base_url=url, timeout_seconds=10)
        assert aio.run(run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                               policy=QUICK)) == JobStatus.done
    assert {m for m, _, _ in fake.calls} == {"gemini-2.5-flash"} and len(fake.calls) == 32
    with Session(demo_engine) as session:
        counted = session.execute(select(col(RateCall.model), func.count())
                                  .group_by(col(RateCall.model))).all()
    assert [tuple(row) for row in counted] == [("gemini-2.5-flash", 32)]


def test_a_scoring_job_without_limits_still_records_its_calls(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    """Other jobs' limiters count every call of a model; a job without limits of its own
    made calls they never saw."""
    import json

    from sqlmodel import col

    from app.job_models import RateCall
    from pipeline.gemini import GeminiBackend
    from tests.fake_gemini import VERDICT, FakeGemini, text_reply

    with Session(demo_engine) as session:
        flash = create_candidate(session, CandidatePlan(
            name="flash", backend="gemini", model="gemini-2.5-flash", template=default_template()),
            None)
    job_id = start_scoring(demo_engine, flash.id or 0, reference.study_id,
                           Settings(gemini_api_key="quota-test-key"))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    with FakeGemini(lambda *_: text_reply(json.dumps(VERDICT))).serve() as url:
        backend = GeminiBackend("quota-test-key", base_url=url, timeout_seconds=10)
        assert aio.run(run_job(demo_engine, lease, lambda _: backend, tmp_path / "out",
                               policy=QUICK)) == JobStatus.done
    with Session(demo_engine) as session:
        counted = session.execute(select(col(RateCall.model), func.count())
                                  .group_by(col(RateCall.model))).all()
        flying = session.scalar(select(func.count()).select_from(RateCall).where(
            col(RateCall.in_flight).is_(True)))
    assert [tuple(row) for row in counted] == [("gemini-2.5-flash", 32)] and flying == 0


SLOW_ON_REAL_TASKS = ('{% if disease not in ["Pleural_Effusion", "glioma", "Diabetic_Retinopathy"] %}'
                      + "{% for a in instruction %}" * 5 + "{% endfor %}" * 5 + "{% endif %}")


def _slow_candidate(engine: Engine) -> int:
    """A template kept before the tasks it is slow on were imported (the check renders every
    disease of the data when a candidate is added): it runs past the render's time limit on
    every disease but the samples'."""
    with Session(engine) as session:
        made = JudgeCandidate(name="slow on real tasks", backend="offline",
                              model="offline-heuristic-1", version="",
                              template=SLOW_ON_REAL_TASKS + default_template(),
                              rubric_version=rubric_version())
        made.version = spec_of(made).version
        session.add(made)
        session.commit()
        return made.id or 0


def test_a_render_past_its_limits_fails_its_answer_and_the_job_goes_on(
        demo_engine: Engine, reference: Reference, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.guarded_render import renderer

    monkeypatch.setattr(renderer, "seconds", 0.3)
    slow = _slow_candidate(demo_engine)
    fair = candidate(demo_engine, "fair after it")
    start_scoring(demo_engine, slow, reference.study_id, Settings(gemini_api_key=""))
    start_scoring(demo_engine, fair.id or 0, reference.study_id, Settings(gemini_api_key=""))
    assert run(demo_engine, tmp_path) == JobStatus.done  # the slow one's job ends
    assert run(demo_engine, tmp_path) == JobStatus.done  # and the next job is not stuck
    with Session(demo_engine) as session:
        failed = session.exec(select(CandidateVerdict).where(
            CandidateVerdict.candidate_id == slow)).scalars().all()
        fair_rows = session.exec(select(CandidateVerdict).where(
            CandidateVerdict.candidate_id == fair.id)).scalars().all()
    assert failed and all("did not render within 0.3 s" in (r.error or "") for r in failed
                          if r.error)
    assert any(r.error for r in failed)
    assert fair_rows and not any(r.error for r in fair_rows)


def test_cancel_stops_a_scoring_job_between_its_answers(
        demo_engine: Engine, reference: Reference, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from app.jobs import request_cancel
    from pipeline.guarded_render import renderer

    monkeypatch.setattr(renderer, "seconds", 0.5)
    slow = _slow_candidate(demo_engine)
    job_id = start_scoring(demo_engine, slow, reference.study_id, Settings(gemini_api_key=""))
    timer = threading.Timer(1.0, request_cancel, (demo_engine, job_id))
    timer.start()
    assert run(demo_engine, tmp_path) == JobStatus.cancelled
    timer.join()
    with Session(demo_engine) as session:
        asked = session.scalar(select(func.count()).select_from(CandidateVerdict).where(
            CandidateVerdict.candidate_id == slow))
        job = session.get(Job, job_id)
    # every answer would have been asked (32, a render limit each) had cancel waited for the task
    assert job is not None and asked < 32


def _gemini_scoring(engine: Engine, tmp_path: Path, candidate_id: int, study_id: int,
                    per_minute: int, cancel_after: float | None = None) -> tuple[str, int, int, int]:
    """Run a Gemini scoring job against the fake server: (status, calls the server got, calls
    the quota holds, of them still in flight)."""
    import json
    import threading

    from sqlmodel import col

    from app.job_models import RateCall
    from app.jobs import request_cancel
    from pipeline.gemini import GeminiBackend
    from tests.fake_gemini import VERDICT, FakeGemini, text_reply

    job_id = start_scoring(engine, candidate_id, study_id,
                           Settings(gemini_api_key="quota-test-key",
                                    gemini_requests_per_minute=per_minute))
    fake = FakeGemini(lambda *_: text_reply(json.dumps(VERDICT)))
    lease = claim(engine, job_id)
    assert lease is not None
    if cancel_after is not None:
        threading.Timer(cancel_after, request_cancel, (engine, job_id)).start()
    with fake.serve() as url:
        backend = GeminiBackend("quota-test-key", base_url=url, timeout_seconds=10)
        status = aio.run(run_job(engine, lease, lambda _: backend, tmp_path / "out",
                                 policy=QUICK))
    with Session(engine) as session:
        held = session.scalar(select(func.count()).select_from(RateCall)) or 0
        flying = session.scalar(select(func.count()).select_from(RateCall).where(
            col(RateCall.in_flight).is_(True))) or 0
    return status, len(fake.calls), held, flying


def test_a_prompt_that_cannot_be_rendered_gives_back_its_place_in_the_quota(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    """A failed render made no call, yet held a quota slot as in flight for 6 minutes: twelve
    of them blocked the model for every job."""
    broken = ('{% if disease not in ["Pleural_Effusion", "glioma", "Diabetic_Retinopathy"] %}'
              "{{ no_such_variable }}{% endif %}")
    with Session(demo_engine) as session:
        made = JudgeCandidate(name="breaks on most tasks", backend="gemini",
                              model="gemini-2.5-flash", version="",
                              template=broken + default_template(), rubric_version=rubric_version())
        made.version = spec_of(made).version
        session.add(made)
        session.commit()
        made_id = made.id or 0
    status, calls, held, flying = _gemini_scoring(demo_engine, tmp_path, made_id,
                                                  reference.study_id, per_minute=1000)
    with Session(demo_engine) as session:
        failed = session.scalar(select(func.count()).select_from(CandidateVerdict).where(
            CandidateVerdict.error.is_not(None)))  # type: ignore[union-attr]
    assert status == JobStatus.done and failed
    assert held == calls and flying == 0


def test_cancel_wakes_a_scoring_job_that_waits_for_quota(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    """One call a minute: the second answer waits a minute for quota. Cancelled after a
    second, the job ran on for minutes before."""
    with Session(demo_engine) as session:
        flash = create_candidate(session, CandidatePlan(
            name="flash", backend="gemini", model="gemini-2.5-flash", template=default_template()),
            None)
    status, calls, _, flying = _gemini_scoring(demo_engine, tmp_path, flash.id or 0,
                                               reference.study_id, per_minute=1, cancel_after=1.0)
    assert status == JobStatus.cancelled and calls == 1 and flying == 0
