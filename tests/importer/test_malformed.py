"""Forgiving of rows, strict about files, and never outside the roots."""

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.importer import ImportFileError, import_tree, tree
from app.models import Attempt, Direction, ImportProblem, Run, Task
from tests import factories

ADD = Direction.add


def good_entry(stem: str = "p-001", disease: str = "Lung_Lesion") -> tuple[str, dict]:
    return f"{stem}-{disease}", factories.conversation(
        f"{stem}.jpeg", disease, "success", [factories.round_entry(1, True)])


def run_count(engine: Engine) -> int:
    with Session(engine) as s:
        return s.exec(select(func.count()).select_from(Run)).one()


def test_truncated_json_names_the_file_and_writes_nothing_of_it(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run"
    key, entry = good_entry()
    factories.write_folder(run, "Alpha-XRay", ADD, {key: entry})
    text = json.dumps({key: entry, "p-002-Lung_Lesion": entry})
    factories.write_folder(run, "Chest-XRay", ADD, text[: len(text) - 40])
    with pytest.raises(ImportFileError) as error:
        import_tree(engine, run)
    assert error.value.path.name == "all_conversations.json"
    assert "Chest-XRay-edit" in str(error.value.path)
    assert "near byte" in error.value.problem
    # The earlier, valid file stays; nothing of the broken one was written.
    with Session(engine) as s:
        keys = s.exec(select(Task.task_key, Task.dataset)).all()
    assert keys == [(key, "Alpha-XRay")]


def test_a_broken_file_is_reported_as_such_when_its_search_documents_failed_too(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A batch's documents are still being indexed (in their own thread) when the file turns
    out broken: the file's error is the one raised, and nothing of the file is written."""
    monkeypatch.setattr(tree, "BATCH_SIZE", 1)  # a batch is flushed before the break
    run = tmp_path / "run"
    entries = dict(good_entry(f"p-{i:03d}") for i in range(2))  # the second is cut short
    text = json.dumps(entries)
    factories.write_folder(run, "Chest-XRay", ADD, text[: len(text) - 40])
    with engine.begin() as conn:  # the first new task's document is there already
        conn.exec_driver_sql("INSERT INTO task_search (rowid, body) VALUES (1, 'stray')")
    with pytest.raises(ImportFileError) as error:
        import_tree(engine, run)
    assert "near byte" in error.value.problem
    assert "search documents failed too" in caplog.text
    assert run_count(engine) == 0


def test_top_level_of_the_wrong_type_is_a_file_error(engine: Engine, tmp_path: Path) -> None:
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, "[1, 2, 3]")
    with pytest.raises(ImportFileError, match="top level should be an object"):
        import_tree(engine, tmp_path / "run")


@pytest.mark.parametrize("field, value, expected", [
    ("image", "../../etc/passwd", "not a plain file name"),
    ("image", "sub/dir.jpeg", "not a plain file name"),
    ("disease", "../normal", "not a plain folder name"),
    ("status", "maybe", "neither 'success' nor 'failed'"),
    ("rounds", "three", "non-empty list"),
])
def test_a_malformed_entry_is_reported_and_skipped(engine: Engine, tmp_path: Path, field: str,
                                                   value: object, expected: str) -> None:
    key, bad = good_entry("bad-1")
    bad[field] = value
    good_key, good = good_entry("good-1")
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {key: bad, good_key: good})
    report = import_tree(engine, tmp_path / "run")
    assert report.tasks_added == 1
    [problem] = [p for p in report.problems if p.kind == "malformed"]
    assert problem.task_key == key and expected in problem.detail
    with Session(engine) as s:
        stored = s.exec(select(ImportProblem).where(ImportProblem.kind == "malformed")).one()
    assert stored.task_key == key


@pytest.mark.parametrize("round_patch, expected", [
    ({"round": "one"}, "positive whole number"),
    ({"verification": {"qualified": "yes"}}, "should be true or false"),
    ({"generate_prompt": {"prompt": 42}}, "should be text"),
    ({"edit_result": "ok"}, "should be an object"),
])
def test_wrong_types_inside_rounds(engine: Engine, tmp_path: Path, round_patch: dict,
                                   expected: str) -> None:
    key, entry = good_entry()
    entry["rounds"][0].update(round_patch)
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {key: entry})
    report = import_tree(engine, tmp_path / "run")
    assert report.tasks_added == 0
    assert expected in report.problems[0].detail


def test_repeated_round_numbers_are_malformed(engine: Engine, tmp_path: Path) -> None:
    key, entry = good_entry()
    entry["rounds"] = [factories.round_entry(1, False), factories.round_entry(1, True)]
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {key: entry})
    report = import_tree(engine, tmp_path / "run")
    assert report.problem_counts["malformed"] == 1 and "repeat" in report.problems[0].detail


def test_unknown_fields_are_reported_but_imported(engine: Engine, tmp_path: Path) -> None:
    key, entry = good_entry()
    entry["surprise"] = 1
    entry["rounds"][0]["verification"]["confidence"] = 0.9
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {key: entry})
    report = import_tree(engine, tmp_path / "run")
    assert report.tasks_added == 1
    details = sorted(p.detail for p in report.problems if p.kind == "unknown_field")
    assert len(details) == 2 and "'confidence'" in details[0] and "'surprise'" in details[1]


def test_missing_images_are_counted_and_the_task_imported(engine: Engine, tmp_path: Path) -> None:
    run, source = tmp_path / "run", tmp_path / "source"
    key, entry = good_entry()
    entry["status"] = "failed"
    factories.write_folder(run, "Chest-XRay", ADD, {key: entry})
    source.mkdir()
    report = import_tree(engine, run, source)
    assert report.problem_counts == {"missing_image": 1, "missing_original": 1}
    with Session(engine) as s:
        attempt = s.exec(select(Attempt)).one()
    assert not attempt.image_present
    assert attempt.image_relpath == "Chest-XRay-edit-failed/Lung_Lesion/p-001-Lung_Lesion-edit-failed-1.jpeg"


def test_image_paths_never_come_from_final_image_path(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run"
    key, entry = good_entry()
    entry["final_image_path"] = "../../etc/passwd"
    factories.write_folder(run, "Chest-XRay", ADD, {key: entry})
    factories.write_images(run, "Chest-XRay", ADD, "p-001", "Lung_Lesion", [], accepted=True)
    import_tree(engine, run)
    with Session(engine) as s:
        attempt = s.exec(select(Attempt)).one()
    assert attempt.image_present
    assert attempt.image_relpath == "Chest-XRay-edit/Lung_Lesion/p-001-Lung_Lesion-edit.jpeg"


def test_a_link_leading_outside_the_root_counts_as_missing(engine: Engine, tmp_path: Path) -> None:
    run, outside = tmp_path / "run", tmp_path / "outside.jpeg"
    factories.jpeg(outside)
    key, entry = good_entry()
    factories.write_folder(run, "Chest-XRay", ADD, {key: entry})
    target = run / "Chest-XRay-edit/Lung_Lesion/p-001-Lung_Lesion-edit.jpeg"
    target.parent.mkdir(parents=True)
    os.symlink(outside, target)
    report = import_tree(engine, run)
    assert report.problem_counts["missing_image"] == 1


def test_api_failures_become_runs_without_rounds(engine: Engine, tmp_path: Path) -> None:
    failure = {"task": "p-9-Edema", "step": "verify_image", "round": 3, "error": "500 INTERNAL",
               "image": "p-9.jpeg", "disease": "Edema"}
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {},
                           progress={"p-9-Edema": "api_failed", "p-8-Edema": "api_failed"},
                           api_failures=[failure])
    report = import_tree(engine, tmp_path / "run")
    assert report.runs_added["api_failed"] == 1
    assert report.problem_counts["api_failed_unrecoverable"] == 1
    with Session(engine) as s:
        run = s.exec(select(Run)).one()
        task = s.get(Task, run.task_id)
    assert (run.failure_step, run.failure_round, run.n_rounds) == ("verify_image", 3, 0)
    assert task is not None and task.outcome == "api_failed"


def test_a_later_success_keeps_the_earlier_api_failure_as_history(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run"
    failure = {"task": "p-001-Lung_Lesion", "step": "edit_image", "round": 1, "error": "429",
               "image": "p-001.jpeg", "disease": "Lung_Lesion"}
    factories.write_folder(run, "Chest-XRay", ADD, {},
                           progress={"p-001-Lung_Lesion": "api_failed"}, api_failures=[failure])
    import_tree(engine, run)
    key, entry = good_entry()
    factories.write_folder(run, "Chest-XRay", ADD, {key: entry}, progress={key: "success"},
                           api_failures=[failure])
    import_tree(engine, run)
    with Session(engine) as s:
        task = s.exec(select(Task)).one()
        outcomes = [r.outcome for r in s.exec(select(Run).order_by(Run.id))]  # type: ignore[arg-type]
    assert outcomes == ["api_failed", "success"]
    assert task.outcome == "success"


def test_a_missing_run_root_is_a_clear_error(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(ImportFileError, match="not a folder"):
        import_tree(engine, tmp_path / "nope")


def test_json_files_and_folders_linked_from_outside_are_never_read(engine: Engine, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    key, entry = good_entry()
    factories.write_folder(outside, "Elsewhere-XRay", ADD, {key: entry})
    (outside / "paper.json").write_text(json.dumps([{"image_id": "a", "task": "add", "rounds": []}]))
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(outside / "Elsewhere-XRay-edit", run / "Linked-XRay-edit")
    os.symlink(outside / "paper.json", run / "paper.json")
    inner = run / "Chest-XRay-edit"
    inner.mkdir()
    os.symlink(outside / "Elsewhere-XRay-edit" / "all_conversations.json",
               inner / "all_conversations.json")
    report = import_tree(engine, run)
    assert report.tasks_added == 0
    assert sorted(report.files_ignored) == [
        "Chest-XRay-edit/all_conversations.json (outside the run root)",
        "Linked-XRay-edit (outside the run root)",
        "paper.json (outside the run root)",
    ]


def test_a_deeply_nested_file_is_refused_quickly_naming_it_and_the_depth(
        engine: Engine, tmp_path: Path) -> None:
    """200 KB nested 100,000 levels deep once drove an import past 20 GB of memory."""
    import resource

    key, entry = good_entry()
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps({key: entry})[:-1] + f', "p-002-Lung_Lesion": {deep}}}'
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, text)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ImportFileError) as error:
        import_tree(engine, tmp_path / "run")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KB
    assert error.value.path.name == "all_conversations.json"
    assert "nested more than 64 levels" in error.value.problem
    assert run_count(engine) == 0  # the good entry before it is not written either


def test_a_large_integer_is_a_malformed_entry_not_a_broken_file(engine: Engine, tmp_path: Path) -> None:
    key, entry = good_entry()
    other_key, other = good_entry("p-002")
    other["rounds"][0]["round"] = 10**30
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, {key: entry, other_key: other})
    report = import_tree(engine, tmp_path / "run")
    assert run_count(engine) == 1
    assert [(p.task_key, p.kind) for p in report.problems if p.kind != "missing_image"] == [
        (other_key, "malformed")]


def test_a_repeated_key_is_a_problem_and_imported_once(engine: Engine, tmp_path: Path) -> None:
    key, entry = good_entry()
    once = json.dumps({key: entry})
    text = once[:-1] + ", " + once[1:]  # the same key twice in one object
    factories.write_folder(tmp_path / "run", "Chest-XRay", ADD, text)
    report = import_tree(engine, tmp_path / "run")
    assert run_count(engine) == 1
    assert [(p.task_key, p.kind) for p in report.problems if p.kind != "missing_image"] == [
        (key, "duplicate_key")]
    with Session(engine) as s:
        assert s.exec(select(ImportProblem.kind).where(
            ImportProblem.kind == "duplicate_key")).all() == ["duplicate_key"]
