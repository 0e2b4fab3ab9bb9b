"""`medbanana stats`: the same figures from the shell, written whole or not at all."""

import csv
import io
import json
from pathlib import Path

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from app.models import Role
from app.settings import Settings
from tests.agreement.test_report import answer_all
from tests.studies.conftest import make_study
from tests.web.routes.test_reading import as_user


def env_for(engine: Engine, tmp_path: Path) -> dict[str, str]:
    return {"MEDBANANA_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "MEDBANANA_VAR_DIR": str(tmp_path / "var")}


def test_json_csv_and_html(demo_engine: Engine, tmp_path: Path) -> None:
    setup = make_study(demo_engine, readers=3)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 6 + ["no"] * 2,
                                    "reader-2": ["no"] * 8})
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    as_json = runner.invoke(cli, ["stats", str(setup.study.id)], env=env)
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    assert report["n_cases"] == 8 and report["study"]["name"] == "pilot"
    as_csv = runner.invoke(cli, ["stats", "pilot", "--format", "csv", "--table", "among-readers"], env=env)
    assert [r["question"] for r in csv.DictReader(io.StringIO(as_csv.stdout))][-1] == "overall"
    target = tmp_path / "report.html"
    as_html = runner.invoke(cli, ["stats", "pilot", "--format", "html", "-o", str(target)], env=env)
    assert as_html.exit_code == 0 and not (tmp_path / "report.html.partial").exists()
    page = BeautifulSoup(target.read_text(), "html.parser")
    assert len(page.select("#reader-table tbody tr")) == 3
    assert "direction" in page.select_one("#sampling").get_text()
    assert page.select_one("#judge-vs-reference") is not None and page.select("svg")
    assert not page.select("link[href], script[src], img[src]")  # self-contained


def test_unknown_study_or_table_is_a_clear_error(demo_engine: Engine, tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    missing = runner.invoke(cli, ["stats", "no-such-study"], env=env)
    assert missing.exit_code == 1 and "no study with id or name 'no-such-study'" in missing.output
    make_study(demo_engine)
    bad = runner.invoke(cli, ["stats", "pilot", "--format", "csv", "--table", "nope"], env=env)
    assert bad.exit_code == 1 and "no table 'nope'" in bad.output
    wrong = runner.invoke(cli, ["stats", "pilot", "--format", "pdf"], env=env)
    assert wrong.exit_code == 2


def test_the_report_page_is_served_to_admins(demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    response = admin.get(f"/studies/{setup.study.id}/report.html")
    assert response.status_code == 200
    assert BeautifulSoup(response.text, "html.parser").select_one("#blinding") is not None
    assert as_user(demo_engine, settings, "reader-0").get(
        f"/studies/{setup.study.id}/report.html").status_code == 403
