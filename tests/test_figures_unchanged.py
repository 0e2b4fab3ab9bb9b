"""The figures of a fixed study do not change when the code under them is made faster.

The golden files in tests/golden/fixed_study/ were written by this test at commit f1827ab,
before the judged-edit pool was kept, the study's rows were bulk-written and the importer
used COPY (issue 28). Any later change that moves a figure fails here; a change meant to
move one rewrites them with MEDBANANA_WRITE_GOLDEN=1 and says why in its commit.

The study's secrets (its readers' order, the opaque uids) are drawn from a counter, so
the readers read in the same order each time: the anytime-valid figures depend on that
order. Only the times, the uids and the commit are masked; every figure, interval, count
and row is compared.
"""

import itertools
import json
import math
import os
import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.exports.curated import CuratedFilter, write_curated
from app.exports.pairs import write_pairs
from app.studies.models import Design
from app.web.main import create_app
from tests.accounts import token_client
from tests.agreement.test_report import answer_all
from tests.config import server_settings
from tests.signing import signing_marker
from tests.studies.conftest import make_study

GOLDEN = Path(__file__).parent / "golden" / "fixed_study"
MASKED_KEYS = {"created_at", "generated_at", "exported_at", "locked_at", "computed_at", "uid",
               "order_secret", "commit",
               # The audit log's head digests records that hold their own times.
               "head_sha256"}
HEX_UID = re.compile(r"\b[0-9a-f]{24}\b")
STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<masked>" if k in MASKED_KEYS else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str):
        return STAMP.sub("<time>", HEX_UID.sub("<uid>", value))
    return value


def outputs(engine: Engine, tmp_path: Path) -> dict[str, Any]:
    setup = make_study(engine, design=Design.validation, readers=3)
    yes_no = ["yes", "no", "yes", "yes", "cannot_assess", "no", "yes", "no"] * 2
    answer_all(engine, setup, {"reader-0": ["yes"] * 12 + ["no"] * 4,
                               "reader-1": yes_no, "reader-2": yes_no[::-1]})
    client = token_client(create_app(server_settings(tmp_path), engine), engine)
    sid = setup.study.id
    found: dict[str, Any] = {
        "agreement.json": client.get(f"/studies/{sid}/agreement.json").json(),
        "quality.json": client.get(f"/api/quality?study={sid}").json(),
    }
    for name in ("answers.csv", "answers-long.csv", "design.csv", "reference.csv",
                 "disagreements.csv"):
        response = client.get(f"/studies/{sid}/{name}")
        assert response.status_code == 200, name
        found[name] = response.text.splitlines()
    pairs = write_pairs(engine, tmp_path / "pairs", signing_marker())
    found["pairs.jsonl"] = [json.loads(line) for line in
                            (pairs.target / "pairs.jsonl").read_text().splitlines()]
    curated = write_curated(engine, tmp_path / "curated", CuratedFilter(modality=("chest_xray",)),
                            signing_marker())
    found["curated.manifest.json"] = json.loads((curated.target / "manifest.json").read_text())
    return {name: masked(value) for name, value in found.items()}


def test_a_fixed_studys_figures_and_exports_are_as_before(demo_engine: Engine, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = itertools.count(1)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: f"{next(drawn):0{2 * n}x}")
    as_before(outputs(demo_engine, tmp_path), GOLDEN)


def as_before(found: dict[str, Any], golden: Path) -> None:
    """Each output equals its golden file (written instead under MEDBANANA_WRITE_GOLDEN=1)."""
    if os.environ.get("MEDBANANA_WRITE_GOLDEN") == "1":
        golden.mkdir(parents=True, exist_ok=True)
        for name, value in found.items():
            (golden / f"{name}.json").write_text(json.dumps(value, indent=1, sort_keys=True) + "\n")
    for name, value in found.items():
        expected = json.loads((golden / f"{name}.json").read_text())
        assert _alike(value, expected), name


def _alike(found: Any, expected: Any) -> bool:
    """Equal, floats to seven significant figures: an iterative fit (the Bradley-Terry strengths)
    stops within its tolerance, and where it stops moves in the ninth figure with the BLAS
    and scipy a machine has, not with our code."""
    if isinstance(found, float) and isinstance(expected, float):
        return math.isclose(found, expected, rel_tol=1e-7, abs_tol=1e-12)
    if isinstance(found, dict) and isinstance(expected, dict):
        return found.keys() == expected.keys() and all(_alike(found[k], expected[k]) for k in found)
    if isinstance(found, list) and isinstance(expected, list):
        return len(found) == len(expected) and all(map(_alike, found, expected))
    return bool(found == expected)
