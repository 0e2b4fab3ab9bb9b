"""Files in the paper's schema (format doc, section 4), detected automatically."""

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.importer import import_tree
from app.models import Attempt, JudgeVerdict, Run, Task
from tests import factories


def paper_entry(image_id: str = "s5-0001", disease: str = "Lung_Opacity", task: str = "add",
                outcome: str = "success") -> dict[str, Any]:
    rounds = [
        {"round": 1, "instruction": "Add a subtle opacity",
         "verdict": {"has_disease": False, "structure_reasonable": True, "looks_realistic": True,
                     "qualified": False, "reason": "too subtle"}},
        {"round": 2, "instruction": "Add a clear opacity",
         "verdict": {"has_disease": True, "structure_reasonable": True, "looks_realistic": True,
                     "qualified": True, "reason": "good", "fidelity": True,
                     "weighted_score": 0.86}},
    ]
    entry = {"image_id": image_id, "dataset": "MIMIC_single_disease_selection_dim1024_1k_per_class",
             "modality": "chest_xray", "disease": disease, "task": task, "rounds": rounds,
             "outcome": outcome, "output_path": "/elsewhere/x.jpeg"}
    if outcome == "success":
        entry["success_round"] = 2
    return entry


def write(run: Path, name: str, entries: list[dict[str, Any]], shape: str) -> None:
    run.mkdir(parents=True, exist_ok=True)
    if shape == "array":
        body = json.dumps(entries)
    elif shape == "lines":
        body = "\n".join(json.dumps(e) for e in entries) + "\n"
    else:
        body = json.dumps({f"{e['image_id']}-{e['disease']}": e for e in entries})
    (run / name).write_text(body)


@pytest.mark.parametrize("shape, name", [("array", "medbanana.json"), ("lines", "medbanana.jsonl"),
                                         ("object", "metadata.json")])
def test_each_container_shape_imports(engine: Engine, tmp_path: Path, shape: str, name: str) -> None:
    run = tmp_path / "run"
    write(run, name, [paper_entry(), paper_entry("s5-0002", outcome="failed")], shape)
    report = import_tree(engine, run)
    assert report.tasks_added == 2
    assert dict(report.runs_added) == {"success": 1, "failed": 1}
    with Session(engine) as s:
        task = s.exec(select(Task).where(Task.task_key == "s5-0001-Lung_Opacity")).one()
        run_row = s.exec(select(Run).where(Run.task_id == task.id)).one()
        verdicts = s.exec(select(JudgeVerdict).order_by(JudgeVerdict.id)).all()  # type: ignore[arg-type]
    assert task.modality == "chest_xray" and task.n_rounds == 2
    assert run_row.success_round == 2
    assert verdicts[1].fidelity is True and verdicts[1].weighted_score == pytest.approx(0.86)


def test_paper_images_are_found_under_the_paper_names(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run"
    entry = paper_entry()
    write(run, "medbanana.json", [entry], "array")
    base = f"{entry['dataset']}-edit"
    factories.jpeg(run / f"{base}-failed/Lung_Opacity/s5-0001-Lung_Opacity-add-failed-1.jpeg")
    factories.jpeg(run / f"{base}/Lung_Opacity/s5-0001-Lung_Opacity-add.jpeg")
    report = import_tree(engine, run)
    assert report.problem_counts.get("missing_image", 0) == 0
    with Session(engine) as s:
        assert all(a.image_present for a in s.exec(select(Attempt)))


def test_removal_in_paper_schema_inverts_compliance(engine: Engine, tmp_path: Path) -> None:
    write(tmp_path / "run", "m.json", [paper_entry(task="remove")], "array")
    import_tree(engine, tmp_path / "run")
    with Session(engine) as s:
        first = s.exec(select(JudgeVerdict).order_by(JudgeVerdict.id)).first()  # type: ignore[arg-type]
    assert first is not None and first.has_disease is False and first.compliance is True


def test_json_that_is_not_medbanana_is_ignored_and_listed(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.json").write_text(json.dumps({"hello": "world"}))
    report = import_tree(engine, run)
    assert report.files_ignored == ["notes.json"]
    assert report.tasks_added == 0


def test_a_bad_line_in_json_lines_names_the_line(engine: Engine, tmp_path: Path) -> None:
    from app.importer import ImportFileError

    run = tmp_path / "run"
    run.mkdir()
    (run / "m.jsonl").write_text(json.dumps(paper_entry()) + "\n{broken\n")
    with pytest.raises(ImportFileError, match="line 2"):
        import_tree(engine, run)
    with Session(engine) as s:
        assert s.exec(select(Task)).all() == []


def test_a_failed_run_with_no_judged_round_is_imported_as_unjudged(engine: Engine,
                                                                   tmp_path: Path) -> None:
    """A run the files call failed, whose rounds have no verdict the judge gave, was never
    judged: it is not counted, filtered or sampled as a run the judge rejected."""
    never = paper_entry("s5-0003", outcome="failed")
    for item in never["rounds"]:
        item.pop("verdict")
    run = tmp_path / "run"
    write(run, "medbanana.json", [paper_entry("s5-0002", outcome="failed"), never], "array")
    report = import_tree(engine, run)
    assert dict(report.runs_added) == {"failed": 1, "unjudged": 1}
    with Session(engine) as s:
        outcomes = {t.task_key: t.outcome for t in s.exec(select(Task)).all()}
    assert outcomes == {"s5-0002-Lung_Opacity": "failed", "s5-0003-Lung_Opacity": "unjudged"}
