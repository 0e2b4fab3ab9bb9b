"""Preference pairs: the rule table, the folder (JSON Lines, Parquet, images, manifest) read
back, Hugging Face datasets loading it, and nothing half-written."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image
from sqlalchemy.engine import Engine

from app.exports import ExportError, PairRule, write_pairs
from app.exports.pairs import order
from tests.quality.conftest import read_study, validation_study
from tests.signing import signing_marker


@pytest.mark.parametrize(("chosen", "rejected", "rule", "expected"), [
    (None, None, PairRule.flip, ("keep", False, False)),
    (True, False, PairRule.flip, ("keep", False, False)),
    (True, None, PairRule.drop, ("keep", False, False)),
    (False, True, PairRule.flip, ("flip", False, False)),
    (False, True, PairRule.drop, ("drop", False, False)),
    (True, True, PairRule.flip, ("keep", True, False)),
    (False, False, PairRule.flip, ("keep", True, False)),
    (False, None, PairRule.flip, ("drop", False, True)),
    (None, True, PairRule.flip, ("drop", False, True)),
    (None, True, PairRule.drop, ("drop", False, False)),
])
def test_the_rule(chosen: bool | None, rejected: bool | None, rule: PairRule,
                  expected: tuple[str, bool, bool]) -> None:
    assert order(chosen, rejected, rule) == expected


def _rows(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]


def test_pairs_load_back_with_every_image(demo_engine: Engine, tmp_path: Path) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)  # the readers fail every third removal the judge passed
    target = tmp_path / "pairs"
    summary = write_pairs(demo_engine, target, signing_marker(), rule=PairRule.flip)
    rows = _rows(target)
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["rule"] == "flip" and manifest["counts"]["pairs"] == len(rows) == summary.rows > 50
    assert pq.read_table(target / "pairs.parquet").num_rows == len(rows)
    for row in rows:
        assert row["judge1"]["overall"] is not None and row["path1"] != row["path2"]
        for key in ("path_src", "path1", "path2"):
            with Image.open(target / row[key]) as image:
                image.verify()
        first, second = row["readers1"], row["readers2"]
        if row["flipped"]:
            assert first["overall"] is True and second["overall"] is False
        elif row["tie"]:
            assert first["overall"] == second["overall"]
        else:  # in the judge's order, and no reader says otherwise
            assert (first or {}).get("overall") is not False
            assert (second or {}).get("overall") is not True
    assert any(r["tie"] for r in rows) and manifest["counts"]["dropped_unordered"] > 0
    assert not (tmp_path / "pairs.partial").exists()

    dropped = write_pairs(demo_engine, tmp_path / "strict", signing_marker(), rule=PairRule.drop)
    assert dropped.rows < summary.rows and not any(r["tie"] for r in _rows(tmp_path / "strict"))


def test_hugging_face_datasets_reads_the_parquet(demo_engine: Engine, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    target = tmp_path / "pairs"
    write_pairs(demo_engine, target, signing_marker())
    loaded = datasets.load_dataset("parquet", data_files=str(target / "pairs.parquet"),
                                   split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.num_rows == len(_rows(target))
    assert {"path_src", "path1", "path2", "tie", "judge1", "readers2"} <= set(loaded.column_names)
    first = loaded[0]
    assert (target / first["path1"]).is_file() and isinstance(first["judge1"], dict)


def test_an_existing_folder_is_refused_and_a_broken_run_leaves_nothing(demo_engine: Engine,
                                                                     tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ExportError, match="already exists"):
        write_pairs(demo_engine, tmp_path / "taken", signing_marker())

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_pairs(demo_engine, tmp_path / "cut", signing_marker(), on_progress=stop)
    assert not (tmp_path / "cut").exists() and not (tmp_path / "cut.partial").exists()


def test_hard_links_share_the_files(demo_engine: Engine, tmp_path: Path) -> None:
    target = tmp_path / "linked"
    write_pairs(demo_engine, target, signing_marker(), link=True)
    row = _rows(target)[0]
    # The originals are linked; an edit is never: the file written is the marked one.
    assert (target / row["path_src"]).stat().st_nlink >= 2
    assert (target / row["path1"]).stat().st_nlink == 1


def test_a_link_planted_under_the_root_is_neither_linked_nor_copied(demo_engine: Engine,
                                                                    tmp_path: Path) -> None:
    """An edit's file swapped for a link to a file outside the data root: the export leaves
    that pair out, whether it copies or hard-links, and holds nothing of the outside file."""
    from sqlmodel import Session

    from app.images.files import ImageKind, resolve_image

    first = write_pairs(demo_engine, tmp_path / "before", signing_marker())
    row = _rows(tmp_path / "before")[0]
    attempt_id = int(Path(row["path2"]).stem)
    with Session(demo_engine) as session:
        found = resolve_image(session, ImageKind.attempt, attempt_id)
    planted = found.root / found.path
    secret = tmp_path / "outside.jpeg"
    # The demo tree is shared by the whole session: the file goes back as it was.
    kept = tmp_path / "kept.jpeg"
    shutil.move(planted, kept)
    shutil.copy2(kept, secret)
    planted.symlink_to(secret)
    try:
        for link in (False, True):
            target = tmp_path / f"after-{link}"
            summary = write_pairs(demo_engine, target, signing_marker(), link=link)
            assert summary.rows == first.rows - 1
            assert summary.counts["skipped_missing_image"] == first.counts["skipped_missing_image"] + 1
            inodes = {p.stat().st_ino for p in (target / "images").rglob("*") if p.is_file()}
            assert secret.stat().st_ino not in inodes
    finally:
        planted.unlink()
        shutil.move(kept, planted)
