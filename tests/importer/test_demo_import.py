"""Importing the synthetic demo: counts, idempotency, and the format's traps."""

import json
import shutil
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.importer import import_tree
from app.models import Attempt, JudgeVerdict, Run, SourceImage, Task
from tests import demo_counts as demo


def counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as s:
        return {m.__name__: s.exec(select(func.count()).select_from(m)).one()
                for m in (SourceImage, Task, Run, Attempt, JudgeVerdict)}


def test_demo_import_counts_every_outcome(engine: Engine, demo_dir: Path) -> None:
    report = import_tree(engine, demo_dir / "run", demo_dir / "source")
    assert report.tasks_added == demo.TASKS
    assert dict(report.runs_added) == demo.OUTCOMES
    assert report.attempts_added == demo.ATTEMPTS
    assert report.verdicts_added == demo.VERDICTS
    assert dict(report.problem_counts) == {"missing_original": 1}
    assert report.problems[0].task_key == "Te-gl_0002-glioma"
    with Session(engine) as s:
        rounds = {t.n_rounds for t in s.exec(select(Task).where(Task.outcome == "success"))}
        assert rounds == {1, 2, 3, 4, 5}
        failed = s.exec(select(Task).where(Task.outcome == "failed")).all()
        assert {t.n_rounds for t in failed} == {5}


def test_reimport_changes_nothing(engine: Engine, demo_dir: Path) -> None:
    import_tree(engine, demo_dir / "run", demo_dir / "source")
    before = counts(engine)
    again = import_tree(engine, demo_dir / "run", demo_dir / "source")
    assert again.files_imported == 0 and again.files_unchanged == demo.JSON_FILES
    assert counts(engine) == before


def test_reimport_of_a_grown_file_adds_only_new_tasks(engine: Engine, demo_dir: Path,
                                                      tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_dir / "run", run)
    conv_path = run / "Fundus-edit" / "all_conversations.json"
    conversations = json.loads(conv_path.read_text())
    extra_key, extra = next(iter(conversations.items()))
    del conversations[extra_key]
    conv_path.write_text(json.dumps(conversations))
    first = import_tree(engine, run, demo_dir / "source")
    conversations[extra_key] = extra
    conv_path.write_text(json.dumps(conversations))
    second = import_tree(engine, run, demo_dir / "source")
    assert first.tasks_added == demo.TASKS - 1
    assert second.tasks_added == 1
    assert sum(second.runs_added.values()) == 1
    assert second.runs_unchanged == len(conversations) - 1


def test_names_with_dashes_and_underscores_come_from_fields(demo_engine: Engine) -> None:
    with Session(demo_engine) as s:
        task = s.exec(select(Task).where(Task.task_key == "s5000-0230-Pleural_Effusion")).one()
        source = s.get(SourceImage, task.source_image_id)
    assert task.disease == "Pleural_Effusion" and task.direction == "add"
    assert source is not None and source.filename == "s5000-0230.jpeg"
    assert source.category == "normal" and source.present


def test_removal_compliance_is_the_absence_of_disease(demo_engine: Engine) -> None:
    with Session(demo_engine) as s:
        task = s.exec(select(Task).where(Task.direction == "remove",
                                         Task.outcome == "success")).first()
        assert task is not None and task.accepted_attempt_id is not None
        verdict = s.exec(select(JudgeVerdict).where(
            JudgeVerdict.attempt_id == task.accepted_attempt_id)).one()
    assert verdict.has_disease is False and verdict.compliance is True
    assert verdict.fidelity is None  # the scripts never wrote fidelity


def test_every_demo_image_is_found(demo_engine: Engine) -> None:
    with Session(demo_engine) as s:
        missing = s.exec(select(Attempt).where(Attempt.image_relpath.is_not(None),  # type: ignore[union-attr]
                                               Attempt.image_present == False)).all()  # noqa: E712
    assert missing == []


def test_raw_verdict_json_is_kept_whole(demo_engine: Engine, demo_dir: Path) -> None:
    conversations = json.loads((demo_dir / "run/Fundus-remove/all_conversations.json").read_text())
    with Session(demo_engine) as s:
        task = s.exec(select(Task).where(Task.dataset == "Fundus", Task.direction == "remove",
                                     Task.outcome == "failed")).first()
        assert task is not None
        verdicts = s.exec(select(JudgeVerdict).join(Attempt).where(
            Attempt.run_id == task.latest_run_id).order_by(Attempt.round)).all()  # type: ignore[arg-type]
    original = [r["verification"] for r in conversations[task.task_key]["rounds"]
                if "verification" in r]
    assert [v.raw() for v in verdicts] == original
    assert all("thinking_summary" not in json.loads(v.raw_json or "{}") for v in verdicts)
