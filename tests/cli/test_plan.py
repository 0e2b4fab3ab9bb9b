"""`medbanana plan` and `medbanana users describe` from the shell."""

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session
from typer.testing import CliRunner

from app.accounts.users import find_user
from app.cli import cli
from tests.cli.test_stats import env_for
from tests.studies.conftest import make_study


def test_plan_prints_the_cases_needed() -> None:
    runner = CliRunner()
    plain = runner.invoke(cli, ["plan", "--agreement", "0.81", "--half-width", "0.05"])
    assert plain.exit_code == 0 and plain.stdout.startswith("237 cases")
    clustered = runner.invoke(cli, ["plan", "--agreement", "0.81", "--half-width", "0.05",
                                    "--edits-per-image", "4", "--icc", "0.215", "--kappa", "0.6",
                                    "--prevalence", "0.7", "--json"])
    plan = json.loads(clustered.stdout)
    assert plan["cases"] == 390 and plan["kappa_cases"] > plan["cases"]


def test_plan_refuses_impossible_values_with_a_reason() -> None:
    runner = CliRunner()
    for args, reason in ((["--agreement", "1.5", "--half-width", "0.05"], "agreement"),
                         (["--agreement", "0.8", "--half-width", "0"], "half-width"),
                         (["--agreement", "0.8", "--half-width", "0.05", "--icc", "2"], "ICC")):
        result = runner.invoke(cli, ["plan", *args])
        assert result.exit_code == 1 and "error:" in result.output and reason in result.output
        assert "Traceback" not in result.output


def test_users_describe_records_what_the_report_says(demo_engine: Engine, tmp_path: Path) -> None:
    make_study(demo_engine)
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    done = runner.invoke(cli, ["users", "describe", "reader-0", "--qualification",
                               "consultant radiologist", "--experience-years", "12"], env=env)
    assert done.exit_code == 0, done.output
    only_years = runner.invoke(cli, ["users", "describe", "reader-0", "--experience-years", "13"], env=env)
    assert only_years.exit_code == 0
    with Session(demo_engine) as session:
        user = find_user(session, "reader-0")
        assert user is not None
        assert (user.qualification, user.experience_years) == ("consultant radiologist", 13)
    bad = runner.invoke(cli, ["users", "describe", "reader-0", "--experience-years", "99"], env=env)
    assert bad.exit_code == 1 and "between 0 and 70" in bad.output
    missing = runner.invoke(cli, ["users", "describe", "nobody"], env=env)
    assert missing.exit_code == 1 and "no user named 'nobody'" in missing.output
