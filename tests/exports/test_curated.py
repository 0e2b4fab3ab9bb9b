"""The curated subset: filters checked with the value named, the readers' rule, the metric
bounds, the manifest's counts and quality estimate, and the scripts' layout read back."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.exports import CuratedFilter, ExportError, ReadersRule, write_curated
from app.exports.curated import Layout
from app.images.metrics_store import compute_pending
from app.importer import import_tree
from app.models import Role
from app.quality.estimates import MIN_READS
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design
from tests.accounts import add_user
from tests.quality.conftest import read_study, validation_study
from tests.signing import signing_marker


@pytest.mark.parametrize(("chosen", "words"), [
    (CuratedFilter(ssim_outside_min=1.5), "ssim-outside-min is 0 to 1, not 1.5"),
    (CuratedFilter(changed_max=-3), "changed-max is 0 to 100, not -3"),
    (CuratedFilter(psnr_min=900), "psnr-min is 0 to 100, not 900"),
])
def test_out_of_range_filters_are_named(demo_engine: Engine, tmp_path: Path,
                                        chosen: CuratedFilter, words: str) -> None:
    with pytest.raises(ExportError, match=words):
        write_curated(demo_engine, tmp_path / "x", chosen, signing_marker())
    assert not (tmp_path / "x").exists()


def test_the_readers_and_the_metrics_choose_the_edits(demo_engine: Engine, tmp_path: Path) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    compute_pending(demo_engine, limit=10_000)  # the preservation metrics the filter reads
    every = write_curated(demo_engine, tmp_path / "every", CuratedFilter(readers=ReadersRule.any),
                          signing_marker())
    passed = write_curated(demo_engine, tmp_path / "passed", CuratedFilter(readers=ReadersRule.accepted),
                           signing_marker())
    kept = write_curated(demo_engine, tmp_path / "kept", CuratedFilter(ssim_outside_min=0.9995),
                         signing_marker())
    assert kept.rows < every.rows and passed.rows < every.rows
    rows = [json.loads(line) for line in (tmp_path / "passed" / "curated.jsonl").read_text().splitlines()]
    assert rows and all(r["readers"]["overall"] is True for r in rows)
    kept_rows = pq.read_table(tmp_path / "kept" / "curated.parquet").to_pylist()
    assert all(r["ssim_outside"] >= 0.9995 for r in kept_rows)
    assert all((r["readers"] or {}).get("overall") is not False for r in kept_rows)
    for row in kept_rows[:20]:
        for key in ("path_src", "path_edit"):
            with Image.open(tmp_path / "kept" / row[key]) as image:
                image.verify()
    manifest = json.loads((tmp_path / "kept" / "manifest.json").read_text())
    counts = manifest["counts"]
    assert manifest["filter"] == {"readers": "not-rejected", "ssim_outside_min": 0.9995}
    assert 0 < counts["after_metrics"] < counts["accepted_edits"]
    assert counts["kept"] == counts["after_metrics"] - counts["dropped_by_readers"]
    quality = manifest["quality"]
    assert quality["study"]["name"] == "quality" and quality["reads"] > 0
    estimate = quality["estimate"]
    if quality["reads"] >= MIN_READS:
        assert 0 <= estimate["low"] <= estimate["value"] <= estimate["high"] <= 1
    else:  # too few read edits inside the frame for an interval: said, not shown
        assert estimate is None and "no estimate" in quality["reason"]


def test_without_a_read_study_the_manifest_says_why(demo_engine: Engine, tmp_path: Path) -> None:
    write_curated(demo_engine, tmp_path / "c", CuratedFilter(), signing_marker())
    quality = json.loads((tmp_path / "c" / "manifest.json").read_text())["quality"]
    assert quality["estimate"] is None and "no read" in quality["reason"]


def test_the_scripts_layout_imports_again(demo_engine: Engine, tmp_path: Path, demo_dir: Path) -> None:
    summary = write_curated(demo_engine, tmp_path / "scripts", CuratedFilter(modality=("fundus",)),
                            signing_marker(),
                            layout=Layout.scripts)
    assert summary.rows > 0 and (tmp_path / "scripts" / "manifest.json").is_file()
    engine = make_engine(f"sqlite:///{tmp_path / 'again.db'}")
    migrate(engine)
    report = import_tree(engine, tmp_path / "scripts", demo_dir / "source")
    assert report.tasks_added == summary.rows and not report.problems


def test_the_estimate_is_claimed_only_inside_the_sampled_frame(demo_engine: Engine, tmp_path: Path) -> None:
    """A chest X-ray study's estimate went into the manifest of a subset holding brain MRI
    and fundus edits no study had sampled."""
    admin = add_user(demo_engine, "chest-admin", Role.admin)
    people = [add_user(demo_engine, f"chest-reader-{i}", Role.reader) for i in range(2)]
    plan = StudyPlan(name="chest only", case_filter=CaseFilter(modality=("chest_xray",)),
                     design=Design.validation, reader_ids=[p.id or 0 for p in people], seed=3,
                     strata_facets=("verdict",), per_stratum={"pass": 30, "fail": 30})
    with Session(demo_engine) as session:
        study = create_study(session=session, plan=plan, created_by=admin)
    read_study(demo_engine, study)
    write_curated(demo_engine, tmp_path / "all", CuratedFilter(readers=ReadersRule.any), signing_marker())
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text())
    quality, counts = manifest["quality"], manifest["counts"]
    frame = quality["frame"]
    assert frame["inside"] + frame["outside"] == counts["after_metrics"]
    assert set(frame["outside_by_modality"]) == {"brain_mri", "fundus"}
    assert sum(frame["outside_by_modality"].values()) == frame["outside"] > 0
    assert quality["of"].startswith(f"the {frame['inside']:,} of the {counts['after_metrics']:,}")
    assert quality["estimate"] is not None
    only_fundus = write_curated(demo_engine, tmp_path / "fundus",
                                CuratedFilter(modality=("fundus",), readers=ReadersRule.any),
                                signing_marker())
    assert only_fundus.rows > 0
    fundus = json.loads((tmp_path / "fundus" / "manifest.json").read_text())["quality"]
    assert fundus["estimate"] is None and "none of the kept edits" in fundus["reason"]
