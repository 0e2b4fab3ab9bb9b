"""Making a job: never a second job that pays for work a queued or running one does, on
either engine; and two drift checks at once make one job."""

import threading
from dataclasses import replace

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.errors import Conflict
from app.job_models import Job
from app.jobs import JobOptions, create_job, request_cancel, start_drift_check
from app.settings import Settings
from app.studies.models import Design
from tests.jobs.test_runner import task_ids
from tests.reference_study import answer_and_lock
from tests.studies.conftest import make_study


def test_a_job_that_would_redo_a_running_jobs_tasks_is_refused_by_name(engine_of: Engine) -> None:
    """A wider selection, or the same one at another concurrency, was a new job that paid for
    the same tasks again."""
    ids = task_ids(engine_of, 6)
    first = create_job(engine_of, ids[:4], JobOptions(rounds=2))
    with pytest.raises(Conflict, match=f"job {first} is already queued on 4 of these 6 tasks"):
        create_job(engine_of, ids, JobOptions(rounds=2))
    with pytest.raises(Conflict, match=f"job {first} is already queued on the same 4 tasks"):
        create_job(engine_of, ids[:4], JobOptions(rounds=2, concurrency=2, requests_per_minute=5))
    # Other work on the same tasks, or the same work on other tasks, is a job of its own.
    create_job(engine_of, ids[:4], JobOptions(rounds=3))
    create_job(engine_of, ids[4:], JobOptions(rounds=2))
    request_cancel(engine_of, first)
    create_job(engine_of, ids[:4], replace(JobOptions(rounds=2), concurrency=4))  # once cancelled


def test_two_drift_checks_at_once_make_one_job(engine_of: Engine) -> None:
    """Two clicks half a second apart made two jobs and an unhandled IntegrityError."""
    setup = make_study(engine_of, readers=2, design=Design.validation)
    answer_and_lock(engine_of, setup.study.id or 0, setup.readers)
    made, refused, broken = [], [], []
    settings = Settings(gemini_api_key="")

    def click() -> None:
        try:
            made.append(start_drift_check(engine_of, setup.study.id or 0, settings, None))
        except Conflict:
            refused.append(1)
        except Exception as error:  # the IntegrityError this test is about
            broken.append(error)

    clicks = [threading.Thread(target=click) for _ in range(4)]
    for t in clicks:
        t.start()
    for t in clicks:
        t.join()
    assert broken == [] and len(made) == 1 and len(refused) == 3
    with Session(engine_of) as session:
        assert len(session.exec(select(Job)).all()) == 1
