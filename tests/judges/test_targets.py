"""The edits the readers rejected and the judge accepted, regenerated in one step with the
promoted judge and the readers' comments; the reverse list offered for review."""

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.agreement.reads import load
from app.agreement.report import settled_consensus
from app.errors import Conflict
from app.job_models import Job
from app.jobs import JobOptions, claim, make_backend, regenerate_let_through, run_job
from app.judges.promotion import promote
from app.judges.targets import targets
from app.models import Run
from app.settings import Settings
from app.studies.models import Design, Study
from app.studies.versions import lock_study
from pipeline.loop import RetryPolicy
from tests import aio
from tests.agreement.test_report import answer_all
from tests.reference_study import Reference, candidate
from tests.studies.conftest import make_study


def test_the_lists_are_the_overall_disagreements(demo_engine: Engine, reference: Reference) -> None:
    with Session(demo_engine) as session:
        found = targets(session, reference.study_id)
        study = session.get(Study, reference.study_id)
        assert study is not None
        data = load(session, study)
        settled = settled_consensus(data)
    judge = {c.item_id: c.judge.get("overall") for c in data.cases}
    readers = {i: s.get("overall") for i, s in settled.items()}
    assert {t.item_id for t in found.let_through} == {
        i for i, r in readers.items() if r is False and judge[i] is True}
    assert {t.item_id for t in found.thrown_away} == {
        i for i, r in readers.items() if r is True and judge[i] is False}
    assert found.settled == len(readers)
    assert found.thrown_away  # the fair rule accepts some edits the record rejected


def _study_whose_readers_reject_some_accepted_edits(engine: Engine) -> int:
    setup = make_study(engine, readers=2, design=Design.validation)
    with Session(engine) as session:
        cases = load(session, setup.study).cases
    # The readers reject every third edit the judge accepted, and agree with it elsewhere.
    pattern = ["no" if (c.judge.get("overall") and i % 3 == 0) or c.judge.get("overall") is False
               else "yes" for i, c in enumerate(cases)]
    answer_all(engine, setup, {r.name: pattern for r in setup.readers})
    with Session(engine) as session:
        study = session.get(Study, setup.study.id)
        assert study is not None
        lock_study(session, study)
        return study.id or 0


def test_regenerating_what_was_let_through(demo_engine: Engine, tmp_path: Path) -> None:
    settings = Settings(gemini_api_key="")
    study_id = _study_whose_readers_reject_some_accepted_edits(demo_engine)
    with Session(demo_engine) as session:
        found = targets(session, study_id)
    assert found.let_through and not found.thrown_away
    strict = candidate(demo_engine, "strict", "strict")
    with Session(demo_engine) as session:
        promote(session, strict.id, None)
    job_id = regenerate_let_through(demo_engine, study_id, settings)
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        options = JobOptions.from_json(job.options)
    assert options.use_reader_feedback and options.study_id == study_id
    assert options.judge_candidate_id == strict.id and job.total == len(found.tasks_to_regenerate)
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    with Session(demo_engine) as session:
        regenerated = session.scalars(select(col(Run.task_id)).where(
            col(Run.origin) == "regeneration")).all()
    assert set(regenerated) == set(found.tasks_to_regenerate)


def test_nothing_let_through_starts_nothing(demo_engine: Engine, reference: Reference) -> None:
    with pytest.raises(Conflict, match="nothing to regenerate"):
        regenerate_let_through(demo_engine, reference.study_id, Settings(gemini_api_key=""))
