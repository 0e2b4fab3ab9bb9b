"""Re-judging: new verdicts on the latest edit, compared only with the same judge's."""

from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.agreement.consistency import judge_consistency
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.models import JudgeVerdict, Run, Task
from pipeline.loop import RetryPolicy
from pipeline.offline import MODEL, OfflineBackend
from tests import aio


def test_rejudge_adds_verdicts_only(demo_engine: Engine, tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        tasks = session.exec(select(Task).where(Task.outcome == "success").limit(3)).all()
        ids = [t.id or 0 for t in tasks]
        attempts = [t.accepted_attempt_id for t in tasks]
        runs_before = len(session.exec(select(Run)).all())
    job_id = create_job(demo_engine, ids, JobOptions(kind="rejudge", rejudge_times=3))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    status = aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                             policy=RetryPolicy(attempts=2, base_seconds=0.0)))
    with Session(demo_engine) as session:
        assert len(session.exec(select(Run)).all()) == runs_before  # no new run
        offline = session.exec(select(JudgeVerdict).where(JudgeVerdict.model == MODEL)).all()
        consistency = judge_consistency(session)
    assert status == "done" and len(offline) == 9
    assert {v.attempt_id for v in offline} == set(attempts)
    # Three offline verdicts per edit: two compared with the first, and the imported verdict
    # (another judge) left out of it. The offline judge is deterministic: all identical.
    assert (consistency.attempts, consistency.pairs) == (3, 6)
    assert consistency.identical.value == 1.0


def test_a_task_without_an_edit_is_reported(demo_engine: Engine, tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        task = session.exec(select(Task).where(Task.outcome == "api_failed")).first()
        assert task is not None and task.thumb_attempt_id is None
    job_id = create_job(demo_engine, [task.id or 0], JobOptions(kind="rejudge"))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out"))
    with Session(demo_engine) as session:
        from app.job_models import Job

        job = session.get(Job, job_id)
        assert job is not None and job.api_failed == 1 and "no edited image" in job.last_errors
