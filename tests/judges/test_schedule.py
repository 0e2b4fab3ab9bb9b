"""Drift checks on a schedule: taken by one worker only when due, started as a scoring job in
the worker's round, and a check that cannot start leaves its reason and the loop goes on."""

import logging
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import Invalid
from app.job_models import Job, JobStatus
from app.jobs import worker
from app.jobs.score_job import start_due_drift_checks
from app.judges.drift import checks, note_for
from app.judges.models import DriftSchedule, JudgeCandidate
from app.judges.reference import Ref
from app.judges.schedule import schedule_of, set_schedule, stop_schedule, take_due
from app.models import utcnow
from app.settings import Settings
from app.studies.models import Study, StudyStatus
from tests import aio
from tests.reference_study import Reference


def test_a_due_check_is_taken_once(demo_engine: Engine, reference: Reference) -> None:
    ref = Ref("study", reference.study_id)
    with Session(demo_engine) as session:
        made = set_schedule(session, ref, 24, None)
        assert timedelta(hours=23) < made.next_at - utcnow() <= timedelta(hours=24)
        set_schedule(session, ref, 48, None)  # a reference keeps one schedule
        assert session.scalar(select(func.count()).select_from(DriftSchedule)) == 1
        with pytest.raises(Invalid, match="every 1 to"):
            set_schedule(session, ref, 0, None)
    assert take_due(demo_engine, utcnow()) == []
    later = utcnow() + timedelta(hours=49)
    assert take_due(demo_engine, later) == [(made.id, ref)]
    assert take_due(demo_engine, later) == []  # moved on by its period: another worker finds none
    with Session(demo_engine) as session:
        schedule = schedule_of(session, ref)
        assert schedule is not None and schedule.next_at > later
        stop_schedule(session, ref)
        assert schedule_of(session, ref) is None


def test_missed_periods_are_not_made_up(demo_engine: Engine, reference: Reference) -> None:
    ref = Ref("study", reference.study_id)
    with Session(demo_engine) as session:
        made = set_schedule(session, ref, 24, None)
    missed = made.next_at + timedelta(days=3, hours=5)  # the server was down three periods
    assert len(take_due(demo_engine, missed)) == 1
    assert take_due(demo_engine, missed + timedelta(minutes=5)) == []
    with Session(demo_engine) as session:
        schedule = schedule_of(session, ref)
        assert schedule is not None and schedule.next_at == made.next_at + timedelta(days=4)


def due_now(engine: Engine) -> None:
    with Session(engine) as session:
        session.execute(update(DriftSchedule).values(next_at=utcnow() - timedelta(minutes=1)))
        session.commit()


def test_the_worker_starts_a_due_check_and_runs_it(demo_engine: Engine, reference: Reference,
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setattr(worker, "compute_pending", lambda engine: 0)  # no image metrics here
    ref = Ref("study", reference.study_id)
    with Session(demo_engine) as session:
        set_schedule(session, ref, 24, None)
    due_now(demo_engine)
    aio.run(worker.work(demo_engine, tmp_path, once=True))
    with Session(demo_engine) as session:
        job = session.scalars(select(Job)).one()
        assert job.kind == "score" and job.status == JobStatus.done
        schedule = schedule_of(session, ref)
        assert schedule is not None and schedule.last_job_id == job.id and schedule.last_error is None
        assert schedule.next_at > utcnow() + timedelta(hours=23)
        made = session.scalars(select(JudgeCandidate).where(
            col(JudgeCandidate.note) == note_for(ref))).one()
        [check] = checks(session, ref)
    assert check.candidate_id == made.id and check.now is not None and check.now.n == 16


def test_a_check_that_cannot_start_keeps_its_reason(demo_engine: Engine, reference: Reference,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    ref = Ref("study", reference.study_id)
    with Session(demo_engine) as session:
        set_schedule(session, ref, 24, None)
        session.execute(update(Study).where(col(Study.id) == reference.study_id)
                        .values(status=StudyStatus.open.value))
        session.commit()
    due_now(demo_engine)
    with caplog.at_level(logging.WARNING, logger="app.jobs.score_job"):
        assert start_due_drift_checks(demo_engine, Settings(gemini_api_key="")) == 0
    assert any("not started" in r.getMessage() for r in caplog.records)
    with Session(demo_engine) as session:
        schedule = schedule_of(session, ref)
        assert schedule is not None and "not locked" in (schedule.last_error or "")
        assert schedule.next_at > utcnow()  # tried again at its next time, not every round
        assert session.scalar(select(func.count()).select_from(Job)) == 0
