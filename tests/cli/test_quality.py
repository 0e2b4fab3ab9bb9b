"""`medbanana quality`: the same figures as /api/quality, a table for the shell, and errors
that name the bad value."""

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from tests.cli.test_stats import env_for
from tests.quality.conftest import read_study, validation_study


def test_the_table_the_json_and_the_file(demo_engine: Engine, tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    empty = runner.invoke(cli, ["quality"], env=env)
    assert empty.exit_code == 0 and "No study to start from" in empty.output
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    table = runner.invoke(cli, ["quality", "--study", "quality"], env=env)
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0] == f"Study {study.id}: quality (validation)"
    assert any(line.startswith("every judged edit") for line in lines)
    assert any(line.startswith("overall ") and "[" in line for line in lines)
    assert any(line.startswith("ROC AUC of the score: 0.") for line in lines)
    assert any("the paper's threshold 0.70: sensitivity" in line for line in lines)
    assert any(line.startswith("Where the judge fails") for line in lines)
    out = tmp_path / "quality.json"
    written = runner.invoke(cli, ["quality", "--format", "json", "--target", "3", "-o", str(out)], env=env)
    assert written.exit_code == 0 and written.output == ""
    data = json.loads(out.read_text())
    assert data["target"] == 0.03 and {p["key"] for p in data["populations"]} == {"accepted", "judged"}
    assert not out.with_name("quality.json.partial").exists()


def test_bad_values_are_named(demo_engine: Engine, tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    for args, words in ((["--target", "40"], "not 40"), (["--study", "nope"], "'nope'"),
                        (["--question", "beauty"], "'beauty'")):
        result = runner.invoke(cli, ["quality", *args], env=env)
        assert result.exit_code == 1 and words in result.output, result.output
