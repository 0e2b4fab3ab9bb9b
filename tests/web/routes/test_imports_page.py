"""/imports lists the files read and every reported row, filterable by kind and file."""

from pathlib import Path

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.importer import import_tree
from app.models import Direction
from app.web.main import create_app
from tests import factories
from tests.accounts import token_client
from tests.config import server_settings


def test_demo_import_is_listed_with_its_missing_original(client: TestClient) -> None:
    page = BeautifulSoup(client.get("/imports").text, "html.parser")
    assert len(page.select("#import-files tbody tr")) == 12
    rows = page.select(".problem-row")
    assert [r["data-kind"] for r in rows] == ["missing_original"]
    assert "Te-gl_0002-glioma" in rows[0].text
    assert page.select_one("#synthetic-banner") is not None


def test_problems_filter_by_kind_and_page(engine: Engine, tmp_path: Path) -> None:
    entries = {}
    for i in range(130):
        key = f"p-{i:03d}-Lung_Lesion"
        entries[key] = factories.conversation(f"p-{i:03d}.jpeg", "Lung_Lesion", "success",
                                              [factories.round_entry(1, True)])
    entries["bad-1-X"] = {"image": "../x", "disease": "X", "status": "success", "rounds": []}
    factories.write_folder(tmp_path / "run", "Chest-XRay", Direction.add, entries)
    import_tree(engine, tmp_path / "run")
    client = token_client(create_app(server_settings(tmp_path / "var"), engine), engine)
    page = BeautifulSoup(client.get("/imports?kind=missing_image").text, "html.parser")
    assert len(page.select(".problem-row")) == 100
    assert {r["data-kind"] for r in page.select(".problem-row")} == {"missing_image"}
    following = client.get(page.select_one('.pager a[rel="next"]')["href"],
                           headers={"HX-Request": "true"})
    partial = BeautifulSoup(following.text, "html.parser")
    assert partial.find("html") is None
    assert len(partial.select(".problem-row")) == 30
    malformed = BeautifulSoup(client.get("/imports?kind=malformed").text, "html.parser")
    assert [r.select("code")[0].text for r in malformed.select(".problem-row")] == ["bad-1-X"]
    assert page.select_one("#synthetic-banner") is None


def test_bad_parameters_are_422(client: TestClient) -> None:
    assert client.get("/imports?file=0").status_code == 422
    assert client.get("/imports?after=x").status_code == 422
