"""`medbanana export-pairs` and `export-curated`: the summary line, and each refusal named."""

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from tests.cli.test_stats import env_for


def test_pairs_and_a_curated_subset(demo_engine: Engine, tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    pairs = runner.invoke(cli, ["export-pairs", str(tmp_path / "pairs"), "--rule", "drop",
                                "--modality", "chest_xray"], env=env)
    assert pairs.exit_code == 0, pairs.output
    assert pairs.output.startswith("wrote ") and " pairs and " in pairs.output
    manifest = json.loads((tmp_path / "pairs" / "manifest.json").read_text())
    assert manifest["rule"] == "drop" and manifest["filter"] == {"modality": ["chest_xray"]}
    curated = runner.invoke(cli, ["export-curated", str(tmp_path / "curated"), "--readers", "any",
                                  "--direction", "remove"], env=env)
    assert curated.exit_code == 0, curated.output
    rows = (tmp_path / "curated" / "curated.jsonl").read_text().splitlines()
    assert rows and all(json.loads(r)["direction"] == "remove" for r in rows)


def test_refusals_name_the_value(demo_engine: Engine, tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    (tmp_path / "taken").mkdir()
    for args, words in (
        (["export-curated", str(tmp_path / "a"), "--ssim-outside-min", "2"], "not 2"),
        (["export-curated", str(tmp_path / "b"), "--changed-max", "150"], "not 150"),
        (["export-pairs", str(tmp_path / "taken")], "already exists"),
        (["export-pairs", str(tmp_path / "no" / "such" / "dir")], "is not a folder"),
        (["export-pairs", str(tmp_path / "c"), "--rule", "maybe"], "maybe"),
    ):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code != 0 and words in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
