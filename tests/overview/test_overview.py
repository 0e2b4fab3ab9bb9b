"""The data-set overview: the paper's tables, computed from the import."""

import csv
import io

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.models import Role
from app.overview import tables as overview
from app.settings import Settings
from app.web.main import create_app
from tests import demo_counts as demo
from tests.accounts import token_client


def test_table1_counts_every_task_once(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        rows = overview.table1(session)
    assert sum(r.success for r in rows) == demo.OUTCOMES["success"]
    assert sum(r.failed for r in rows) == demo.OUTCOMES["failed"]
    assert sum(r.api_failed for r in rows) == demo.OUTCOMES["api_failed"]
    chest_add = next(r for r in rows if (r.modality, r.direction) == ("chest_xray", "add"))
    assert chest_add.success == demo.CHEST_SUCCESS["add"] and chest_add.diseases == 4
    assert chest_add.paper == (12, 9854, 7971, 1.42)
    assert chest_add.avg_rounds_success is not None and 1 <= chest_add.avg_rounds_success <= 5


def test_pass_rates_rounds_and_diseases(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        rates = overview.pass_rates(session)
        rounds = overview.rounds_to_success(session)
        diseases = overview.success_by_disease(session)
    # Imported verdicts never scored fidelity; an unreadable judge answer scores nothing.
    assert rates["fidelity"] == (0, 0)
    assert rates["qualified"][1] == demo.VERDICTS - demo.UNREADABLE_VERDICTS
    assert 0 < rates["qualified"][0] < rates["qualified"][1]
    assert sum(rounds.values()) == demo.OUTCOMES["success"] and set(rounds) == {1, 2, 3, 4, 5}
    assert sum(n for *_, n in diseases) == demo.TASKS


def test_the_page_json_and_csv(client: TestClient, demo_engine: Engine, settings: Settings) -> None:
    page = BeautifulSoup(client.get("/overview").text, "html.parser")
    row = page.select_one('#table1 tr[data-row="chest_xray-add"]')
    assert row is not None and row.select_one(".success").get_text() == str(demo.CHEST_SUCCESS["add"])
    charts = BeautifulSoup(client.get("/overview/charts", headers={"HX-Request": "true"}).text,
                           "html.parser")
    assert charts.select_one("#chart-rounds svg") is not None
    assert charts.select_one("#chart-diseases svg") is not None
    assert page.select_one("#no-rejudging") is not None
    report = client.get("/overview.json").json()
    assert report["paper"]["self_consistency_identical"] == 0.872
    table = list(csv.DictReader(io.StringIO(client.get("/overview/table1.csv").text)))
    assert len(table) == 6
    assert client.get("/overview/nothing.csv").status_code == 404
    reader = token_client(create_app(settings, demo_engine), demo_engine, "a-reader", Role.reader,
                          raise_server_exceptions=False)
    assert reader.get("/overview").status_code == 403


def test_blocked_tasks_are_counted_in_table1(demo_engine: Engine, client: TestClient) -> None:
    """A task whose latest run the API blocked is counted as blocked, neither success nor
    failure, so the table's columns still add up to every task."""
    from sqlalchemy import update
    from sqlmodel import col, select

    from app.models import Task

    with Session(demo_engine) as session:
        task = session.exec(select(Task).where(Task.modality == "fundus",
                                               Task.outcome == "failed")).first()
        assert task is not None
        session.execute(update(Task).where(col(Task.id) == task.id).values(outcome="blocked"))
        session.commit()
        rows = overview.table1(session)
    assert sum(r.blocked for r in rows) == 1
    assert sum(r.success + r.failed + r.api_failed + r.blocked for r in rows) == demo.TASKS
    page = BeautifulSoup(client.get("/overview").text, "html.parser")
    cells = [td.get_text() for td in page.select("#table1 td.blocked")]
    assert sorted(cells) == ["0"] * (len(cells) - 1) + ["1"]
