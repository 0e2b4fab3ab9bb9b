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
