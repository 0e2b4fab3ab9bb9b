"""The same import, listing, search and case page on a real PostgreSQL server."""

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.importer import import_tree
from app.web.main import create_app
from tests import demo_counts as demo
from tests.accounts import token_client
from tests.config import server_settings

pytestmark = pytest.mark.postgres


def test_import_list_search_and_case_page(pg_engine: Engine, demo_dir: Path, tmp_path: Path) -> None:
    report = import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    assert report.tasks_added == demo.TASKS and report.attempts_added == demo.ATTEMPTS
    again = import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    assert again.files_unchanged == demo.JSON_FILES and again.tasks_added == 0
    client = token_client(create_app(server_settings(tmp_path), pg_engine), pg_engine)
    assert client.get("/api/cases").json()["total"] == demo.TASKS
    fundus = client.get("/api/cases?modality=fundus&outcome=success").json()
    assert fundus["total"] > 0 and {i["modality"] for i in fundus["items"]} == {"fundus"}
    found = client.get("/api/cases?q=pneumoth").json()
    assert found["total"] == demo.PNEUMOTHORAX_SEARCHABLE
    assert {i["disease"] for i in found["items"]} == {"Pneumothorax"}
    case_id = fundus["items"][0]["id"]
    page = client.get(f"/cases/{case_id}?modality=fundus&q=fundus")
    assert page.status_code == 200
    image = client.get(client.get(f"/api/cases/{case_id}").json()["source_image"]["url"])
    assert image.status_code == 200


def test_keyset_pages_and_facets_on_postgres(pg_engine: Engine, demo_dir: Path,
                                             tmp_path: Path) -> None:
    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    client = token_client(create_app(server_settings(tmp_path, page_size=7), pg_engine), pg_engine)
    data = client.get("/api/cases?limit=7").json()
    seen = [i["id"] for i in data["items"]]
    while data["next"]:
        data = client.get(data["next"]).json()
        seen += [i["id"] for i in data["items"]]
    assert len(seen) == demo.TASKS == len(set(seen))
    assert client.get("/cases?failed_dimension=realism&rounds=5").status_code == 200


def test_a_broken_file_leaves_nothing_behind_on_postgres(pg_engine: Engine, tmp_path: Path) -> None:
    from app.importer import ImportFileError
    from app.models import Direction
    from tests import factories

    factories.write_folder(tmp_path / "run", "Chest-XRay", Direction.add, '{"a-1-X": {"image": ')
    with pytest.raises(ImportFileError):
        import_tree(pg_engine, tmp_path / "run")
    client = token_client(create_app(server_settings(tmp_path), pg_engine), pg_engine)
    assert client.get("/api/cases").json()["total"] == 0


def test_study_answers_on_postgres(pg_engine: Engine, demo_dir: Path) -> None:
    from sqlmodel import Session, select

    from app.studies.answers import AnswerIn, latest_answer, submit_answer, undo_last
    from app.studies.models import Answer
    from app.studies.worklist import get_assignment, next_open, reader_progress
    from tests.studies.conftest import make_study

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    setup = make_study(pg_engine, repeat_fraction=0.25)
    reader = setup.readers[0]
    values = dict(compliance="yes", structure="yes", realism="yes", fidelity="no",
                  overall="accept", confidence=5)
    with Session(pg_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        a = submit_answer(s, setup.study, first, AnswerIn(**values, submission_id="pg-sub-0001"))
        b = submit_answer(s, setup.study, first, AnswerIn(**values, submission_id="pg-sub-0001"))
        assert a.id == b.id
        assert reader_progress(s, setup.study, reader.id or 0).done == 1
        assert reader_progress(s, setup.study, reader.id or 0).total == 10
        assert undo_last(s, setup.study, reader.id or 0) is not None
        assert latest_answer(s, first.id or 0) is None
        assert next_open(s, setup.study, reader).sequence == 1  # type: ignore[union-attr]
        assert len(s.exec(select(Answer)).all()) == 2


def test_backup_with_pg_dump(pg_engine: Engine, tmp_path: Path) -> None:
    from app.backup import backup_database

    target = tmp_path / "pg.dump"
    url = pg_engine.url.render_as_string(hide_password=False)
    backup_database(url, target)
    assert target.read_bytes()[:5] == b"PGDMP"


def test_restore_with_pg_restore(pg_engine: Engine, tmp_path: Path) -> None:
    import pytest as _pytest
    from sqlmodel import Session, select

    from app.backup import BackupError, backup_database, restore_database
    from app.models import User
    from tests.accounts import add_user

    url = pg_engine.url.render_as_string(hide_password=False)
    add_user(pg_engine, "kept")
    backup_database(url, tmp_path / "pg.dump")
    add_user(pg_engine, "added-later")
    restore_database(url, tmp_path / "pg.dump")
    pg_engine.dispose()
    with Session(pg_engine) as session:
        assert set(session.exec(select(User.name)).all()) == {"kept"}
    (tmp_path / "x.db").write_bytes(b"SQLite format 3\x00")
    with _pytest.raises(BackupError, match="not a pg_dump custom-format file"):
        restore_database(url, tmp_path / "x.db")


def test_a_validation_study_and_its_report_on_postgres(pg_engine: Engine, demo_dir: Path) -> None:
    """The pool of judged attempts (verdict of record), the frozen verdicts, and the report."""
    from sqlmodel import Session

    from app.agreement.reads import load
    from app.agreement.report import study_report
    from app.studies.models import Design
    from tests.agreement.test_report import answer_all
    from tests.studies.conftest import make_study

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    setup = make_study(pg_engine, design=Design.validation)
    with Session(pg_engine) as s:
        cases = load(s, setup.study).cases
    assert len(cases) == 16 and all(c.judge_verdict_id and c.judge for c in cases)
    assert sorted(c.judge["overall"] for c in cases) == [False] * 8 + [True] * 8
    answer_all(pg_engine, setup, {"reader-0": ["yes"] * 16, "reader-1": ["yes"] * 8 + ["no"] * 8})
    with Session(pg_engine) as s:
        report = study_report(load(s, setup.study), resamples=200).as_dict()
    assert report["questions"]["overall"]["judge_vs_reference"]["n"] > 0


def test_the_quality_frame_on_postgres(pg_engine: Engine, demo_dir: Path) -> None:
    """The frame's one-pass read of the verdicts of record (answers packed in SQL) gives the
    pool the study drew from, as on SQLite."""
    from sqlmodel import Session

    from tests.quality.conftest import validation_study
    from tests.quality.test_population import _frame_values, _pool, assert_judge_as_stored

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    study = validation_study(pg_engine)
    with Session(pg_engine) as s:
        assert _frame_values(s, study) == _pool(s, study)
        assert_judge_as_stored(s, study)


def test_search_vectors_are_filled_after_each_commit_and_an_empty_one_is_still_found(
        pg_engine: Engine, demo_dir: Path, tmp_path: Path) -> None:
    """The vectors are filled from a second connection (app/importer/vectors.py). A document
    left without one (an import cut short between its commit and the filling) is still
    found by a search, and the next import fills it."""
    from sqlalchemy import text

    def vectors() -> tuple[int, int]:
        with pg_engine.connect() as conn:
            total, filled = conn.execute(text("SELECT count(*), count(tsv) FROM task_search")).one()
        return total, filled

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    assert vectors() == (demo.TASKS, demo.TASKS)
    with pg_engine.begin() as conn:
        conn.execute(text("UPDATE task_search SET tsv = NULL"))
    client = token_client(create_app(server_settings(tmp_path), pg_engine), pg_engine)
    assert client.get("/api/cases?q=pneumoth").json()["total"] == demo.PNEUMOTHORAX_SEARCHABLE
    again = import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    assert again.tasks_added == 0 and vectors() == (demo.TASKS, demo.TASKS)
    assert client.get("/api/cases?q=pneumoth").json()["total"] == demo.PNEUMOTHORAX_SEARCHABLE


def test_a_new_run_of_a_known_task_is_searchable_on_postgres(pg_engine: Engine, tmp_path: Path) -> None:
    """A second run of a task appends its text to the task's document; the vector is
    computed again, so the new words are found and the old ones still are."""
    from app.models import Direction
    from tests import factories

    for run, prompt in (("first", "Add a faint opacity"), ("second", "Add a zebrastripe shadow")):
        factories.write_folder(tmp_path / run, "Chest-XRay", Direction.add, {
            "a-1-X": factories.conversation("p1.jpg", "Atelectasis", "success",
                                            [factories.round_entry(1, True, prompt=prompt)])})
        import_tree(pg_engine, tmp_path / run)
    client = token_client(create_app(server_settings(tmp_path), pg_engine), pg_engine)
    assert client.get("/api/cases?q=zebrastripe").json()["total"] == 1
    assert client.get("/api/cases?q=faint opacity").json()["total"] == 1


def test_ids_are_handed_out_in_blocks_unique_and_in_order(pg_engine: Engine) -> None:
    from app.bulk import BLOCK, IdAllocator

    with pg_engine.begin() as conn:
        ids = IdAllocator(conn)
        taken = [i for size in (1, 3, BLOCK - 2, 5, BLOCK * 2) for i in ids.take("task", size)]
    assert taken == sorted(set(taken)) and len(taken) == 3 * BLOCK + 7


def test_a_search_few_tasks_match_finds_them_first_and_pages_alike(
        pg_engine: Engine, demo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL looked for a rare word in every document, page order first (65 ms on 88K):
    below FEW_MATCHES the matches are found first. Either way the pages are the same."""
    from sqlalchemy import event

    from app.cases import search

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    client = token_client(create_app(server_settings(tmp_path, page_size=7), pg_engine), pg_engine)
    statements: list[str] = []
    event.listen(pg_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))

    def pages(address: str) -> list[int]:
        data = client.get(address).json()
        seen = [i["id"] for i in data["items"]]
        while data["next"]:
            data = client.get(data["next"]).json()
            seen += [i["id"] for i in data["items"]]
        return seen

    for address in ("/api/cases?limit=7&q=pneumoth", "/api/cases?limit=7&q=fundus",
                    "/api/cases?limit=7&q=pneumoth&sort=changed", "/api/cases?limit=7&q=pleural"):
        found = {}
        for few in (0, 10**9):  # never, always
            monkeypatch.setattr(search, "FEW_MATCHES", few)
            statements.clear()
            found[few] = pages(address)
            assert any("MATERIALIZED" in s for s in statements) == (few > 0)
        assert found[0] == found[10**9] and len(found[0]) == len(set(found[0])) > 0
    monkeypatch.setattr(search, "FEW_MATCHES", 1000)
    statements.clear()
    assert len(pages("/api/cases?limit=7&q=pneumoth")) == demo.PNEUMOTHORAX_SEARCHABLE
    assert any("MATERIALIZED" in s for s in statements)  # the demo's few matches
    first = client.get("/api/cases?limit=7&q=pneumoth").json()["items"][0]["id"]
    statements.clear()
    assert client.get(f"/cases/{first}?q=pneumoth").status_code == 200
    assert any("MATERIALIZED" in s for s in statements)  # its j/k neighbours too
    # Under a metric bound the count is not the text's own: a common word would read all
    # its matches first (150 ms against 30 ms on 88K), so a bounded search keeps the walk.
    statements.clear()
    client.get("/api/cases?limit=7&q=pneumoth&changed_min=1")
    assert statements and not any("MATERIALIZED" in s for s in statements)


def test_the_facet_indexes_are_postgresql_only(pg_engine: Engine, engine: Engine) -> None:
    """(disease, id) and (modality, id) let PostgreSQL walk one value's tasks in id order;
    SQLite, without statistics, would take them where its primary-key walk is faster."""
    from sqlalchemy import inspect

    on_postgres = {i["name"] for i in inspect(pg_engine).get_indexes("task")}
    on_sqlite = {i["name"] for i in inspect(engine).get_indexes("task")}
    assert {"ix_task_facet_disease", "ix_task_facet_modality"} <= on_postgres
    assert not any(name and name.startswith("ix_task_facet_") for name in on_sqlite)


def test_an_import_leaves_the_planner_statistics_of_its_tasks(pg_engine: Engine,
                                                              demo_dir: Path) -> None:
    """Without them, until autovacuum's next round, a filtered page walked every task."""
    from sqlalchemy import text

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    with pg_engine.connect() as conn:
        columns = conn.execute(text("SELECT count(*) FROM pg_stats WHERE tablename = 'task'")).scalar()
    assert columns  # one row of statistics per column, written by ANALYZE


def test_the_pairs_and_a_pairwise_study_on_postgres(pg_engine: Engine, demo_engine: Engine,
                                                    demo_dir: Path) -> None:
    """The pairs are read as the driver's columns (booleans, not SQLite's 0/1): the same pairs
    as on SQLite, and a study drawn, read and counted from them."""
    from dataclasses import replace

    from sqlmodel import Session, select

    from app.cases.filters import CaseFilter
    from app.designs import PairKind, design_of, pairwise_figures
    from app.designs.pairwise.answers import PairAnswerIn, submit
    from app.designs.pairwise.pairs import pairs
    from app.models import Role
    from app.studies.design import StudyPlan
    from app.studies.models import Assignment, Design
    from tests.accounts import add_user

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")

    def found(engine: Engine) -> dict[str, list[tuple[str, int, int, bool, bool]]]:
        with Session(engine) as s:
            return {kind: [(p.modality, p.first.round, p.second.round, p.first.passed,
                            p.second.passed) for p in pairs(s, kind)] for kind in PairKind}

    on_postgres = found(pg_engine)
    assert on_postgres == found(demo_engine)
    assert on_postgres["consecutive"] and on_postgres["accepted"]
    # Verdicts were read: a later round the judge passed.
    assert any(second_passed for *_, second_passed in on_postgres["consecutive"])
    admin = add_user(pg_engine, "chief", Role.admin)
    reader = add_user(pg_engine, "dr-a", Role.reader)
    plan = StudyPlan(name="pairs", case_filter=CaseFilter(), reader_ids=[reader.id or 0],
                     design=Design.pairwise, strata_facets=("modality",), pair_kind="accepted")
    design = design_of(Design.pairwise)
    with Session(pg_engine) as s:
        rows, _ = design.strata(s, plan)
        assert {row.key for row in rows} == {"chest_xray", "brain_mri", "fundus"}
        study = design.create(s, design.up_to(s, replace(plan, strata_facets=()), 5), admin)
        reads = s.exec(select(Assignment).where(Assignment.study_id == study.id)).all()
        for i, assignment in enumerate(reads):
            submit(s, study, assignment, PairAnswerIn(call="ab"[i % 2], confidence=3,
                                                      submission_id=f"pg-read-{i:04d}"))
        figures = pairwise_figures(s, study, resamples=100)
    assert figures.reads == len(reads) == 5 and figures.left.n == 5
    assert figures.premature is not None  # the judge passed one edit of each such pair


def test_an_older_draft_is_refused_on_postgres(pg_engine: Engine, demo_dir: Path) -> None:
    # The edition check is the UPDATE's own condition (migration 0041), on both engines.
    from sqlmodel import Session, select

    from app.errors import Conflict
    from app.studies.answers import DraftIn, save_draft
    from app.studies.models import Draft, Study
    from app.studies.worklist import get_assignment
    from tests.studies.conftest import make_study

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    setup = make_study(pg_engine)
    with Session(pg_engine) as session:
        study = session.get(Study, setup.study.id)
        assert study is not None
        assignment = get_assignment(session, study, setup.readers[0], 1)
        save_draft(session, study, assignment, DraftIn(comment="newer", edition=2_000))
        with pytest.raises(Conflict, match="newer draft"):
            save_draft(session, study, assignment, DraftIn(comment="older", edition=1_000))
        session.rollback()
        save_draft(session, study, assignment, DraftIn(comment="undone answer"))  # no edition
        save_draft(session, study, assignment, DraftIn(comment="next save", edition=5))
        [draft] = session.scalars(select(Draft)).all()
        assert draft.edition == 5 and "next save" in draft.payload
