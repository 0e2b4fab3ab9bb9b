"""Exports are staged in a fresh folder of their own: a link planted at the old staging name
is never written through or moved into place, and a folder there is never deleted."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.exports import CuratedFilter, PairRule, export_runs, write_curated, write_pairs
from app.exports.curated import Layout
from tests.signing import signing_marker

EXPORTS: dict[str, Callable[[Engine, Path], Any]] = {
    "export-pairs": lambda engine, target: write_pairs(engine, target, signing_marker(), rule=PairRule.flip),
    "export-curated": lambda engine, target: write_curated(engine, target, CuratedFilter(), signing_marker()),
    "export-curated --layout scripts": lambda engine, target: write_curated(
        engine, target, CuratedFilter(), signing_marker(), layout=Layout.scripts),
    "export-run": lambda engine, target: export_runs(engine, target, signing_marker()),
}


@pytest.mark.parametrize("export", list(EXPORTS))
def test_a_planted_link_is_never_written_through(demo_engine: Engine, tmp_path: Path,
                                                 export: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    target = out / "export"
    (out / "export.partial").symlink_to(elsewhere)
    EXPORTS[export](demo_engine, target)
    assert list(elsewhere.iterdir()) == []  # nothing written where the link leads
    assert target.is_dir() and not target.is_symlink() and any(target.iterdir())
    assert (out / "export.partial").is_symlink()  # left as it was
    assert sorted(p.name for p in out.iterdir()) == ["export", "export.partial"]


@pytest.mark.parametrize("export", list(EXPORTS))
def test_a_folder_it_did_not_make_is_never_deleted(demo_engine: Engine, tmp_path: Path,
                                                   export: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    kept = out / "export.partial"
    kept.mkdir()
    (kept / "notes.txt").write_text("someone's work")

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        if export == "export-pairs":
            write_pairs(demo_engine, out / "export", signing_marker(), on_progress=stop)
        elif export == "export-run":
            export_runs(demo_engine, out / "export", signing_marker(), on_progress=stop)
        else:
            write_curated(demo_engine, out / "export", CuratedFilter(), signing_marker(), on_progress=stop,
                          layout=Layout.scripts if "scripts" in export else Layout.parquet)
    assert (kept / "notes.txt").read_text() == "someone's work"
    # What the broken run staged is gone; nothing else appeared.
    assert sorted(p.name for p in out.iterdir()) == ["export.partial"]


def test_a_target_made_meanwhile_is_left_alone_and_the_staged_folder_removed(tmp_path: Path) -> None:
    from app.staging import place_folder, stage_folder

    target = tmp_path / "export"
    staged = stage_folder(target)
    (staged / "rows.jsonl").write_text("{}\n")
    target.mkdir()  # an empty folder a rename would silently replace
    with pytest.raises(FileExistsError, match="nothing was written there"):
        place_folder(staged, target)
    assert not staged.exists() and target.is_dir() and list(target.iterdir()) == []
