"""Every export writes its edits marked, and leaves out (named, counted) an edit whose file
is not an image, going on with the rest."""

import hashlib
import json
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.exports import CuratedFilter, export_runs, write_curated, write_pairs
from app.images.files import ImageKind, resolve_image
from app.models import Attempt, DataRoot, Task
from app.provenance.marks import read_mark
from tests.signing import signing_marker


def corrupt_one_accepted_edit(engine: Engine, folder: Path) -> str:
    """Point one accepted edit at a file of garbage in a root of its own; its task key."""
    folder.mkdir()
    (folder / "broken.jpeg").write_bytes(b"\xff\xd8\xff\xe0 this is no JPEG")
    with Session(engine) as session:
        root = DataRoot(path=str(folder), kind="run")
        session.add(root)
        session.flush()
        task = session.exec(select(Task).where(Task.accepted_attempt_id != None)  # noqa: E711
                            .order_by(Task.id)).first()
        assert task is not None
        attempt = session.get(Attempt, task.accepted_attempt_id)
        assert attempt is not None
        attempt.image_root_id, attempt.image_relpath = root.id, "broken.jpeg"
        session.add(attempt)
        session.commit()
        return task.task_key


def test_a_corrupt_edit_is_left_out_named_and_counted(demo_engine: Engine, tmp_path: Path) -> None:
    broken = corrupt_one_accepted_edit(demo_engine, tmp_path / "elsewhere")
    pairs = write_pairs(demo_engine, tmp_path / "pairs", signing_marker())
    manifest = json.loads((tmp_path / "pairs" / "manifest.json").read_text())
    named = [entry for entry in manifest["left_out"] if entry["what"] == broken]
    assert named and "not a readable" in named[0]["why"]
    assert pairs.counts["skipped_missing_image"] >= 1 and pairs.rows > 0
    curated = write_curated(demo_engine, tmp_path / "curated", CuratedFilter(), signing_marker())
    assert curated.counts["skipped_missing_image"] >= 1
    runs = export_runs(demo_engine, tmp_path / "runs", signing_marker())
    assert any(entry["what"].startswith(broken) for entry in runs.left_out)
    assert runs.edits > 0


def test_each_exported_edit_names_its_original_by_hash(demo_engine: Engine, tmp_path: Path) -> None:
    write_pairs(demo_engine, tmp_path / "pairs", signing_marker())
    row = json.loads((tmp_path / "pairs" / "pairs.jsonl").read_text().splitlines()[0])
    source = (tmp_path / "pairs" / row["path_src"]).read_bytes()
    for side in ("path1", "path2"):
        reading = read_mark((tmp_path / "pairs" / row[side]).read_bytes())
        assert reading is not None and reading.state == "Valid"
        assert reading.edit["original"]["sha256"] == hashlib.sha256(source).hexdigest()
    assert read_mark(source) is None  # the original is written as it is stored
    with Session(demo_engine) as session:
        stored = resolve_image(session, ImageKind.source, int(row["path_src"].split("/")[-1].split(".")[0]))
        assert stored.read_bytes() == source


def test_check_mark_says_who_signed_and_fails_on_an_unmarked_file(demo_engine: Engine,
                                                                  tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from app.cli.root import cli

    write_pairs(demo_engine, tmp_path / "pairs", signing_marker())
    row = json.loads((tmp_path / "pairs" / "pairs.jsonl").read_text().splitlines()[0])
    edit, source = tmp_path / "pairs" / row["path1"], tmp_path / "pairs" / row["path_src"]
    marked = CliRunner().invoke(cli, ["check-mark", str(edit)])
    assert marked.exit_code == 0 and "valid" in marked.output and "self-signed" in marked.output
    both = CliRunner().invoke(cli, ["check-mark", str(edit), str(source)])
    assert both.exit_code == 1 and f"{source}: no C2PA manifest" in both.output
