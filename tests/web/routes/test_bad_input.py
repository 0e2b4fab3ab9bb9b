"""Bad input gets a 4xx with a reason, never a 500."""

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web.main import create_app
from tests.accounts import token_client

TOO_BIG = "99999999999999999999"  # beyond a 64-bit database integer


@pytest.fixture
def lenient_client(demo_engine, settings: Settings) -> TestClient:  # type: ignore[no-untyped-def]
    # Server errors become 500 answers here instead of exceptions, as a browser would see.
    return token_client(create_app(settings, demo_engine), demo_engine,
                        raise_server_exceptions=False)


@pytest.mark.parametrize("url", [
    f"/cases/{TOO_BIG}", f"/api/cases/{TOO_BIG}", f"/images/attempt/{TOO_BIG}",
    f"/images/source/{TOO_BIG}", f"/cases?after={TOO_BIG}", f"/cases?before={TOO_BIG}",
    f"/api/cases?after={TOO_BIG}", f"/imports?file={TOO_BIG}", f"/imports?after={TOO_BIG}",
    f"/cases/1?run={TOO_BIG}", "/cases/0", "/cases/-1", "/cases?disease=%00",
    "/api/cases?disease=a%0Ab",
])
def test_out_of_range_or_control_characters_are_422(lenient_client: TestClient, url: str) -> None:
    response = lenient_client.get(url)
    assert response.status_code == 422, (url, response.status_code)


def test_unknown_route_is_an_html_404(lenient_client: TestClient) -> None:
    response = lenient_client.get("/nowhere")
    assert response.status_code == 404 and "text/html" in response.headers["content-type"]


@pytest.mark.parametrize("bad", [
    {"name": ""}, {"design": "pairwise"}, {"facets": ["verdict"]}, {"readers": []},
    {"seed": "-1"}, {"total": "0", "facets": []}, {"repeat_fraction": "0.9"},
    {"readers_per_case": "5"}, {"design": "real_or_edited", "original_share": "0.95"},
    {"design": "adaptive", "facets": [], "total": ""}, {"margin": "0"},
    {"target_agreement": "-1"}, {"n:add": "9999"}, {"primary_question": "nope"},
])
def test_a_refused_study_form_links_each_reason_to_its_field(demo_engine, settings: Settings,  # type: ignore[no-untyped-def]
                                                             bad: dict[str, object]) -> None:
    from bs4 import BeautifulSoup

    from app.models import Role
    from tests.web.routes.test_accounts import client_for
    from tests.web.routes.test_pairwise import reader_ids

    admin = client_for(demo_engine, settings, "chief", Role.admin)
    client_for(demo_engine, settings, "dr-a", Role.reader)
    posted = {"name": "x", "design": "accepted", "facets": ["direction"], "n:add": "2",
              "n:remove": "2", "readers": [str(i) for i in reader_ids(demo_engine, ["dr-a"])]}
    answer = admin.post("/studies", data=posted | bad)
    assert answer.status_code == 422
    page = BeautifulSoup(answer.text, "html.parser")
    reasons = page.select("#study-error li")
    assert reasons, bad
    for link in page.select("#study-error a[href^='#field-']"):
        assert page.select_one(link["href"]) is not None, (bad, link["href"])
