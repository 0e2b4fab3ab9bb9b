"""A promoted candidate judges new jobs; each job and each verdict records it; the judge of
record's own prompt comes back when asked, and a job that cannot run the promoted judge is
refused before it exists."""

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.errors import Invalid
from app.job_models import Job
from app.jobs import JobOptions, claim, create_job, make_backend, run_job
from app.judges.candidates import CandidatePlan, create_candidate
from app.judges.promotion import promote, promoted
from app.models import Attempt, JudgeVerdict, Run, Task
from app.settings import Settings
from pipeline.judge_spec import default_template
from pipeline.loop import RetryPolicy
from tests import aio
from tests.reference_study import candidate


def _run(engine: Engine, tmp_path: Path) -> None:
    lease = claim(engine)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda o: make_backend(o, Settings(gemini_api_key="")),
                    tmp_path, policy=RetryPolicy(attempts=1, base_seconds=0.0)))


def test_a_promoted_candidate_judges_and_is_recorded(demo_engine: Engine, tmp_path: Path) -> None:
    strict = candidate(demo_engine, "strict", "strict")
    with Session(demo_engine) as session:
        assert promoted(session) is None
        promote(session, strict.id, None)
        task_ids = list(session.scalars(select(col(Task.id)).order_by(col(Task.id)).limit(2)))
        newest_before = session.scalar(select(func.max(JudgeVerdict.id))) or 0
    job_id = create_job(demo_engine, task_ids, JobOptions(rounds=2))
    _run(demo_engine, tmp_path)
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and JobOptions.from_json(job.options).judge_candidate_id == strict.id
        made = session.scalars(select(JudgeVerdict).where(col(JudgeVerdict.id) > newest_before)).all()
        assert made and all(v.candidate_id == strict.id for v in made)
        assert {v.prompt_version for v in made} == {strict.version}
        assert all((v.model or "").endswith("/strict") for v in made)
        # The runs' rounds stop when the strict judge passes an edit, as with any judge.
        runs = session.scalars(select(Run).where(col(Run.task_id).in_(task_ids),
                                                 col(Run.origin) == "regeneration")).all()
        assert len(runs) == 2 and all(
            session.scalar(select(func.count()).select_from(Attempt).where(
                col(Attempt.run_id) == r.id)) for r in runs)
        promote(session, None, None)
        assert promoted(session) is None
    again = create_job(demo_engine, task_ids[:1], JobOptions(rounds=1))
    with Session(demo_engine) as session:
        job = session.get(Job, again)
        assert job is not None and JobOptions.from_json(job.options).judge_candidate_id is None


def test_a_job_that_cannot_run_the_promoted_judge_is_refused(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        pro = create_candidate(session, CandidatePlan(name="pro", backend="gemini",
                                                      model="gemini-2.5-pro",
                                                      template=default_template()), None)
        promote(session, pro.id, None)
        task_id = session.scalars(select(col(Task.id)).limit(1)).one()
    with pytest.raises(Invalid, match="runs on the gemini backend") as refused:
        create_job(demo_engine, [task_id], JobOptions(backend="offline"))
    assert refused.value.field == "backend"
    with pytest.raises(Invalid, match="interactively"):
        create_job(demo_engine, [task_id], JobOptions(backend="gemini", mode="batch"))
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0
