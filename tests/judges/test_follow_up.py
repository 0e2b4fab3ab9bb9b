"""The follow-up on a targeted regeneration: a study of the job's new edits, read by the same
readers, and before and after on the same source images."""

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.errors import Conflict
from app.jobs import claim, make_backend, regenerate_let_through, run_job
from app.judges.follow_up import comparison, create_follow_up
from app.judges.targets import targets
from app.models import Role, User
from app.settings import Settings
from app.studies.models import Assignment, Study, StudyItem
from pipeline.loop import RetryPolicy
from tests import aio
from tests.judges.test_targets import _study_whose_readers_reject_some_accepted_edits
from tests.quality.conftest import read_study


def _regenerated(engine: Engine, tmp_path: Path) -> tuple[int, int]:
    settings = Settings(gemini_api_key="")
    source = _study_whose_readers_reject_some_accepted_edits(engine)
    job_id = regenerate_let_through(engine, source, settings)
    with Session(engine) as session, pytest.raises(Conflict, match="queued"):
        create_follow_up(session, job_id, "too soon", None, session.get(User, 1))  # type: ignore[arg-type]
    lease = claim(engine)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    return source, job_id


def test_the_follow_up_reads_the_new_edits_and_compares(demo_engine: Engine, tmp_path: Path) -> None:
    source, job_id = _regenerated(demo_engine, tmp_path)
    with Session(demo_engine) as session:
        admin = session.scalars(select(User).where(col(User.role) == Role.admin)).first()
        assert admin is not None
        tasks = set(targets(session, source).tasks_to_regenerate)
        study = create_follow_up(session, job_id, "after regeneration", None, admin)
        assert not study.images_ready  # it opened at once, before its images were drawn
        items = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id)).all()
        assert {i.task_id for i in items} == tasks and len(items) == len(tasks)
        readers = lambda s: set(session.scalars(  # noqa: E731
            select(col(Assignment.user_id)).where(col(Assignment.study_id) == s)))
        assert readers(study.id) == readers(source)
        assert comparison(session, study).figures is None  # nothing read yet
    read_study(demo_engine, study, lambda _reader, _case: True)  # every new edit accepted
    with Session(demo_engine) as session:
        found = comparison(session, session.get(Study, study.id))  # type: ignore[arg-type]
    assert found is not None and found.figures is not None
    assert found.figures.tasks == len(tasks)
    assert found.figures.before.value == 0.0 and found.figures.after.value == 1.0
    assert found.figures.difference.value == 1.0
    assert found.figures.after.low is not None and found.figures.after.low < 1.0


def test_only_a_finished_regeneration_of_a_study_is_followed_up(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Study)) == 0
        with pytest.raises(Exception, match="no job 99"):
            create_follow_up(session, 99, "x", None, None)  # type: ignore[arg-type]
