"""What kept figures rest on: each change they rest on moves the fingerprint, a kept page
asks for it in one statement, and the pages' kept figures follow it."""

from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.accounts.users import describe_user
from app.agreement.report import Slice
from app.agreement.service import report_for
from app.fingerprints import data_of, fingerprint, study_parts, study_state
from app.importer import import_tree
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.models import Direction, JudgeVerdict, User
from app.quality.report import quality_report
from app.readers.checks import reader_checks
from app.readers.pause import resume
from app.studies.answers import AnswerIn, submit_answer
from app.studies.models import Adjudication, Assignment, Study, StudyItem, StudyReader
from app.studies.reader_models import PauseCause, ReaderPause
from app.studies.versions import lock_study
from app.studies.worklist import get_assignment
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio, factories
from tests.jobs.test_runner import task_ids
from tests.studies.conftest import StudySetup, make_study

GOOD = dict(compliance="yes", structure="yes", realism="yes", fidelity="yes", overall="accept",
            confidence=4, tags=[], comment="", time_on_case_ms=12_000)


class Statements:
    """Counts the statements ``engine`` runs inside the block."""

    def __init__(self, engine: Engine) -> None:
        self.engine, self.count, self.statements = engine, 0, []

    def _seen(self, conn: object, cursor: object, statement: str, *args: object) -> None:
        self.count += 1
        self.statements.append(statement)

    def __enter__(self) -> "Statements":
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


def data_fingerprint(engine: Engine) -> tuple[object, ...]:
    with Session(engine) as session:
        return fingerprint(session)


def state_of(engine: Engine, study: Study) -> tuple[object, ...]:
    with Session(engine) as session:
        return study_state(session, study.id or 0)


def read(engine: Engine, study: Study, reader: User, number: int, submission: str,
         **changes: object) -> None:
    with Session(engine) as session:
        assignment = get_assignment(session, study, reader, number)
        submit_answer(session, study, assignment, AnswerIn(**{**GOOD, "submission_id": submission,
                                                              **changes}))


def run_jobs(engine: Engine, tmp_path: Path, options: JobOptions) -> None:
    job_id = create_job(engine, task_ids(engine, 2), options)
    lease = claim(engine, job_id)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                    policy=RetryPolicy(attempts=2, base_seconds=0.0)))


def test_the_data_sets_fingerprint_follows_an_import_a_regeneration_and_a_rejudgement(
        demo_engine: Engine, tmp_path: Path) -> None:
    seen = [data_fingerprint(demo_engine)]
    run = tmp_path / "run"
    factories.write_folder(run, "Chest-XRay", Direction.add, {"p-901-Lung_Lesion": factories.conversation(
        "p-901.jpeg", "Lung_Lesion", "success", [factories.round_entry(1, True)])})
    factories.write_images(run, "Chest-XRay", Direction.add, "p-901", "Lung_Lesion", [], accepted=True)
    import_tree(demo_engine, run)
    seen.append(data_fingerprint(demo_engine))
    run_jobs(demo_engine, tmp_path, JobOptions())
    seen.append(data_fingerprint(demo_engine))
    run_jobs(demo_engine, tmp_path, JobOptions(kind="rejudge", rejudge_times=1))
    seen.append(data_fingerprint(demo_engine))
    assert len(set(seen)) == 4


def test_a_run_that_ends_moves_the_fingerprint_though_no_id_does(demo_engine: Engine) -> None:
    with demo_engine.begin() as connection:
        connection.execute(text("UPDATE run SET outcome = 'running' WHERE id = (SELECT max(id) FROM run)"))
    running = data_fingerprint(demo_engine)
    with demo_engine.begin() as connection:
        connection.execute(text("UPDATE run SET outcome = 'success' WHERE id = (SELECT max(id) FROM run)"))
    assert data_fingerprint(demo_engine) != running


def test_a_migration_moves_every_fingerprint(demo_engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    from app.resources import resource_dir

    setup = make_study(demo_engine)
    head, study_head = data_fingerprint(demo_engine), state_of(demo_engine, setup.study)
    config = Config()
    config.set_main_option("script_location", str(resource_dir("app.migrations")))
    with demo_engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "-1")
    assert data_fingerprint(demo_engine) != head
    assert state_of(demo_engine, setup.study) != study_head
    with demo_engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    assert data_fingerprint(demo_engine) == head


@pytest.fixture
def setup(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)


def test_a_studys_state_follows_every_change_its_figures_and_checks_rest_on(
        demo_engine: Engine, setup: StudySetup) -> None:
    study, reader = setup.study, setup.readers[0]
    seen = [state_of(demo_engine, study)]

    def changed() -> None:
        seen.append(state_of(demo_engine, study))
        assert seen[-1] != seen[-2]

    read(demo_engine, study, reader, 1, "sub-00000001")
    changed()  # a new read
    read(demo_engine, study, reader, 1, "sub-00000002", overall="reject")
    changed()  # a new version of it
    with Session(demo_engine) as session:
        item = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id)).first()
        assert item is not None
        session.add(Adjudication(study_id=study.id or 0, item_id=item.id or 0, user_id=setup.admin.id or 0,
                                 version=1, submission_id="adj-1", compliance="yes", structure="yes",
                                 realism="yes", fidelity="yes", overall="accept"))
        session.commit()
    changed()  # an adjudication
    with Session(demo_engine) as session:  # a re-judgement of one of its edits
        verdict = session.scalars(select(JudgeVerdict).where(col(JudgeVerdict.attempt_id).in_(
            select(col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id)))).first()
        assert verdict is not None
        session.add(JudgeVerdict.model_validate(verdict.model_dump(exclude={"id"})))
        session.commit()
    changed()
    with Session(demo_engine) as session:
        session.add(ReaderPause(study_id=study.id or 0, user_id=reader.id or 0, cause=PauseCause.time,
                                reason="fast", statistic=1.0, threshold=2.0, cases=10))
        session.commit()
    changed()  # a pause
    with Session(demo_engine) as session:
        resume(session, session.get(Study, study.id) or study, reader.id or 0,
               session.get(User, setup.admin.id) or setup.admin)
    changed()  # its resumption
    with Session(demo_engine) as session:
        describe_user(session=session, user=session.get(User, reader.id) or reader,
                      qualification="neuroradiologist", experience_years=12)
    changed()  # what the report says of a reader
    with Session(demo_engine) as session:
        session.add(StudyReader(study_id=study.id or 0, user_id=setup.outsider.id or 0, order_seed=5))
        session.commit()
    changed()  # a reader added


def test_a_studys_state_is_one_statement_read_once_per_transaction_and_forgotten_on_a_write(
        demo_engine: Engine, setup: StudySetup) -> None:
    with Session(demo_engine) as session:
        with Statements(demo_engine) as counted:
            first = study_state(session, setup.study.id or 0)
            assert study_state(session, setup.study.id or 0) == first
        assert counted.count == 1, counted.statements
        assignment = session.scalars(select(Assignment).where(
            col(Assignment.study_id) == setup.study.id)).first()
        assert assignment is not None
        session.add(ReaderPause(study_id=setup.study.id or 0, user_id=assignment.user_id,
                                cause=PauseCause.time, reason="fast", statistic=1.0, threshold=2.0,
                                cases=10))
        session.flush()  # written in this transaction: the state is asked again
        assert study_state(session, setup.study.id or 0) != first


def test_the_agreement_report_and_the_reader_checks_follow_a_read_a_pause_and_a_qualification(
        demo_engine: Engine, setup: StudySetup) -> None:
    study, reader = setup.study, setup.readers[0]

    def figures() -> tuple[object, str | None, int]:
        with Session(demo_engine) as session:
            found = session.get(Study, study.id) or study
            report = report_for(session, found, Slice())[1]
            checks = reader_checks(session, found)
            assert checks is not None
            mine = next(r for r in checks.readers if r.user_id == reader.id)
            return report, checks.pauses[0].cause if checks.pauses else None, mine.reads

    first = figures()
    assert first[1:] == (None, 0)
    assert figures()[0] is first[0]  # kept
    read(demo_engine, study, reader, 1, "sub-00000001")
    after_read = figures()
    assert after_read[0] is not first[0] and after_read[2] == 1
    with Session(demo_engine) as session:
        session.add(ReaderPause(study_id=study.id or 0, user_id=reader.id or 0, cause=PauseCause.time,
                                reason="fast", statistic=1.0, threshold=2.0, cases=10))
        session.commit()
    assert figures()[1] == PauseCause.time
    with Session(demo_engine) as session:
        describe_user(session=session, user=session.get(User, reader.id) or reader,
                      qualification="neuroradiologist", experience_years=12)
    assert figures()[0] is not after_read[0]


def test_the_quality_report_follows_a_read_in_its_study_named_or_chosen_by_default(
        demo_engine: Engine) -> None:
    from app.studies.models import Design

    setup = make_study(demo_engine, design=Design.validation)
    with Session(demo_engine) as session:
        named = quality_report(session, setup.study.id, weighted=False)
        default = quality_report(session, weighted=False)
        assert quality_report(session, setup.study.id, weighted=False) is named  # kept
        with Statements(demo_engine) as counted:
            assert quality_report(session, weighted=False) is default
        assert counted.count == 2  # the studies, and one fingerprint
        state = fingerprint(session, *study_parts([setup.study.id or 0]))
        assert data_of(state) == fingerprint(session)
    read(demo_engine, setup.study, setup.readers[0], 1, "sub-00000001")
    with Session(demo_engine) as session:
        assert quality_report(session, setup.study.id, weighted=False) is not named
        default = quality_report(session, weighted=False)
        assert quality_report(session, weighted=False) is default  # kept
        lock_study(session, session.get(Study, setup.study.id) or setup.study)
        # A locked study is chosen before an open one, and locking changes no answer.
        assert quality_report(session, weighted=False) is not default


@pytest.fixture(params=["sqlite", "postgres"])
def either_engine(request: pytest.FixtureRequest, demo_engine: Engine) -> Engine:
    if request.param == "sqlite":
        return demo_engine
    engine: Engine = request.getfixturevalue("pg_engine")
    return engine


def test_every_change_to_the_metrics_is_counted_by_the_tables_triggers(either_engine: Engine,
                                                                      tmp_path: Path) -> None:
    """What the pairwise form and the case browser's bounds rest on: one row, moved by every
    insert, digest written and delete, on both engines (migration 0040)."""
    from app.fingerprints import METRICS, state
    from app.models import Attempt, AttemptMetric

    def changes() -> object:
        with Session(either_engine) as session:
            return state(session, (METRICS,))[0]

    with Session(either_engine) as session:
        empty = session.scalars(select(Attempt)).first() is None
    if empty:  # the PostgreSQL database: one imported task to measure
        run = tmp_path / "run"
        factories.write_folder(run, "Chest-XRay", Direction.add, {"p-902-Edema": factories.conversation(
            "p-902.jpeg", "Edema", "success", [factories.round_entry(1, True)])})
        factories.write_images(run, "Chest-XRay", Direction.add, "p-902", "Edema", [], accepted=True)
        import_tree(either_engine, run)
    with Session(either_engine) as session:
        attempt = session.scalars(select(col(Attempt.id)).where(col(Attempt.id).not_in(
            select(col(AttemptMetric.attempt_id))))).first()
        assert attempt is not None
    seen = [changes()]
    with Session(either_engine) as session:
        session.add(AttemptMetric(attempt_id=attempt, ssim=0.9))
        session.commit()
    seen.append(changes())
    with either_engine.begin() as connection:
        connection.execute(text("UPDATE attempt_metric SET pixels_sha256 = 'x' WHERE attempt_id = :a"),
                           {"a": attempt})
    seen.append(changes())
    with either_engine.begin() as connection:
        connection.execute(text("DELETE FROM attempt_metric WHERE attempt_id = :a"), {"a": attempt})
    seen.append(changes())
    assert len(set(seen)) == 4, seen
