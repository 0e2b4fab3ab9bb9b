"""The Alembic migrations build exactly the tables the models describe."""

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, text
from sqlmodel import SQLModel

import app.job_models
import app.judges.models
import app.studies.models  # noqa: F401  (its tables must be compared too)
from app.db import include_object, make_engine, migrate


def test_models_and_migrations_agree(template_db: Path) -> None:
    engine = make_engine(f"sqlite:///{template_db}")
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": include_object})
        assert compare_metadata(context, SQLModel.metadata) == []
    engine.dispose()


def upgrade_to(connection: Connection, revision: str) -> None:
    """The schema as it stood at ``revision``, to put rows of that time into."""
    from alembic import command
    from alembic.config import Config

    from app.resources import MIGRATIONS_DIR

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def test_0010_freezes_the_verdict_of_record_of_existing_studies(tmp_path: Path) -> None:
    """A study made before 0010 gets, per item, its attempt's first verdict (not a later
    re-judgement), and include_failed_rounds becomes the "runs" design."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as connection:
        upgrade_to(connection, "0009")
        connection.execute(text(
            "INSERT INTO app_user (id, name, role, password_hash, is_demo, created_at) "
            "VALUES (1, 'admin', 'admin', 'x', 0, '2026-01-01')"))
        connection.execute(text(
            "INSERT INTO source_image (id, dataset, modality, category, filename, present) "
            "VALUES (1, 'Chest-XRay', 'chest_xray', 'normal', 'a.jpeg', 1)"))
        connection.execute(text(
            "INSERT INTO task (id, source_image_id, dataset, modality, disease, direction, task_key, "
            "n_rounds, failed_mask) "
            "VALUES (1, 1, 'Chest-XRay', 'chest_xray', 'Edema', 'add', 'a-Edema', 1, 0)"))
        connection.execute(text(
            "INSERT INTO run (id, task_id, origin, outcome, n_rounds, fingerprint, created_at) "
            "VALUES (1, 1, 'import', 'success', 1, 'f', '2026-01-01')"))
        connection.execute(text(
            "INSERT INTO attempt (id, run_id, round, image_present) VALUES (1, 1, 1, 1)"))
        for verdict_id, model in ((7, None), (9, "gemini-2.5-pro"), (12, "offline")):
            connection.execute(text(
                "INSERT INTO judge_verdict (id, attempt_id, qualified, model, created_at) "
                f"VALUES ({verdict_id}, 1, 1, :model, '2026-01-01')"), {"model": model})
        for study_id, failed_rounds in ((1, 0), (2, 1)):
            connection.execute(text(
                "INSERT INTO study (id, name, status, blinded, reveal, include_failed_rounds, "
                "repeat_fraction, seed, selection, created_by, created_at) VALUES "
                f"({study_id}, 's{study_id}', 'open', 1, 'never', {failed_rounds}, 0, 1, '{{}}', 1, "
                "'2026-01-01')"))
            connection.execute(text(
                "INSERT INTO study_item (id, study_id, task_id, attempt_id, stratum, uid) VALUES "
                f"({study_id}, {study_id}, 1, 1, '', 'uid{study_id}')"))
            connection.execute(text(
                "INSERT INTO assignment (study_id, user_id, item_id, sequence) VALUES "
                f"({study_id}, 1, {study_id}, 1)"))
    migrate(engine)
    with engine.connect() as connection:
        frozen = connection.execute(text("SELECT judge_verdict_id FROM study_item")).scalars().all()
        designs = connection.execute(text("SELECT design FROM study ORDER BY id")).scalars().all()
    engine.dispose()
    assert frozen == [7, 7] and designs == ["accepted", "runs"]


def test_0020_gives_runs_never_judged_their_own_outcome(tmp_path: Path) -> None:
    """A failed run none of whose rounds has a verdict the judge gave (no image, or only
    unreadable verdicts) becomes "unjudged", and its task too; a run the judge rejected at
    least once stays failed."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as connection:
        upgrade_to(connection, "0019")
        connection.execute(text(
            "INSERT INTO source_image (id, dataset, modality, category, filename, present) "
            "VALUES (1, 'Chest-XRay', 'chest_xray', 'normal', 'a.jpeg', 1)"))
        # Task 1: no image in any round. Task 2: one unreadable verdict. Task 3: rejected.
        for task_id in (1, 2, 3):
            connection.execute(text(
                "INSERT INTO task (id, source_image_id, dataset, modality, disease, direction, "
                "task_key, n_rounds, failed_mask, outcome, latest_run_id) VALUES "
                f"({task_id}, 1, 'Chest-XRay', 'chest_xray', 'Edema{task_id}', 'add', 'k{task_id}', 1, 0, "
                f"'failed', {task_id})"))
            connection.execute(text(
                "INSERT INTO run (id, task_id, origin, outcome, n_rounds, fingerprint, created_at) "
                f"VALUES ({task_id}, {task_id}, 'import', 'failed', 1, 'f{task_id}', '2026-01-01')"))
            connection.execute(text(
                "INSERT INTO attempt (id, run_id, round, image_present) "
                f"VALUES ({task_id}, {task_id}, 1, {int(task_id > 1)})"))
        connection.execute(text(
            "INSERT INTO judge_verdict (id, attempt_id, qualified, error, created_at) "
            "VALUES (1, 2, NULL, 'JSON parse error', '2026-01-01'), "
            "(2, 3, 0, NULL, '2026-01-01')"))
    migrate(engine)
    with engine.connect() as connection:
        runs = connection.execute(text("SELECT outcome FROM run ORDER BY id")).scalars().all()
        tasks = connection.execute(text("SELECT outcome FROM task ORDER BY id")).scalars().all()
    engine.dispose()
    assert runs == tasks == ["unjudged", "unjudged", "failed"]


def test_0029_keeps_every_search_document_and_indexes_prefixes(tmp_path: Path) -> None:
    """The search table is built anew with prefix indexes: the same documents, found by the
    same words and prefixes."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    documents = {1: "a pleural effusion at the left base", 2: "pleurisy and edema", 7: "no finding"}
    with engine.begin() as connection:
        upgrade_to(connection, "0028")
        for rowid, body in documents.items():
            connection.execute(text("INSERT INTO task_search (rowid, body) VALUES (:r, :b)"),
                               {"r": rowid, "b": body})
    migrate(engine)

    def found(match: str) -> list[int]:
        with engine.connect() as connection:
            return list(connection.execute(text(
                "SELECT rowid FROM task_search WHERE task_search MATCH :m ORDER BY rowid"),
                {"m": match}).scalars())

    with engine.connect() as connection:
        table = connection.execute(text(
            "SELECT sql FROM sqlite_master WHERE name = 'task_search'")).scalar_one()
    engine.dispose()
    assert "prefix='1 2 3 4 5 6 7 8 9 10'" in table and "detail='none'" in table
    assert found('"pleu"*') == [1, 2]
    assert found('"effusions"') == [1]  # the porter stemmer still applies
    assert found('"finding"*') == [7]
    assert found('"zzz"*') == []
