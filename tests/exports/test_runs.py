"""export-run writes the scripts' layout: importing it again gives back the same runs."""

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.db import make_engine
from app.exports import ExportError, export_runs
from app.importer import import_tree
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.models import Run, Task
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio
from tests import demo_counts as demo
from tests.signing import signing_marker


def test_round_trip_through_the_scripts_layout(demo_engine: Engine, template_db: Path,
                                               demo_dir: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    shutil.copy(template_db, fresh)
    engine = make_engine(f"sqlite:///{fresh}")
    with Session(demo_engine) as session:
        ids = [t for t in session.exec(select(Task.id).where(Task.modality == "brain_mri").limit(2))
               if t is not None]
    job_id = create_job(demo_engine, ids, JobOptions(rounds=3))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "pipeline",
                    policy=RetryPolicy(attempts=2, base_seconds=0.0)))
    target = tmp_path / "export"
    written = export_runs(demo_engine, target, signing_marker())
    assert written.tasks == demo.TASKS
    # The demo's one task without its original: its edits cannot name their parent, so
    # they are left out, each named.
    assert {entry["what"].rsplit(" round", 1)[0] for entry in written.left_out} == {"Te-gl_0002-glioma"}
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["left_out"] == written.left_out and manifest["edits"] == written.edits
    report = import_tree(engine, target, demo_dir / "source")
    assert report.tasks_added == demo.TASKS
    # As in the demo itself, and its three rounds whose files were left out.
    assert dict(report.problem_counts) == {"missing_original": 1, "missing_image": 3}
    with Session(demo_engine) as session:
        regenerated = session.exec(select(Run).where(Run.origin == "regeneration")).all()
    with Session(engine) as session:
        for run in regenerated:
            task = session.exec(select(Task).where(Task.id == run.task_id)).first()
            original = session.get(Task, run.task_id)
            assert original is not None
            copy = session.exec(select(Task).where(Task.task_key == original.task_key)).one()
            assert (copy.outcome, copy.n_rounds) == (run.outcome, run.n_rounds), task
    conversations = json.loads((target / "Brain-MRI-edit/all_conversations.json").read_text())
    entry = next(iter(conversations.values()))
    assert set(entry) == {"image", "disease", "status", "rounds", "final_prompt", "final_image_path"}


def test_an_existing_folder_is_never_overwritten(demo_engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ExportError, match="already exists"):
        export_runs(demo_engine, tmp_path / "taken", signing_marker())
    assert list((tmp_path / "taken").iterdir()) == []
