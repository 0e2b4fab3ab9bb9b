"""Security headers on every answer, HSTS only with Secure cookies, and pages that hold no
inline script for the policy to block."""

from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.web.main import create_app
from tests.accounts import token_client
from tests.config import server_settings
from tests.studies.conftest import make_study


def test_every_answer_carries_the_headers(client: TestClient) -> None:
    for url in ("/cases", "/login", "/healthz", "/api/cases", "/static/app.css", "/nowhere"):
        headers = client.get(url).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy, url
        assert "unsafe-eval" not in policy and "'unsafe-inline'" not in policy.split("style-src")[0]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
        assert headers["x-frame-options"] == "DENY"
        assert "strict-transport-security" not in headers  # plain HTTP in tests


def test_hsts_when_cookies_are_secure(demo_engine: Engine, tmp_path: Path) -> None:
    app = create_app(server_settings(tmp_path, secure_cookies=True, worker=False), demo_engine)
    response = TestClient(app, base_url="https://testserver").get("/login")
    assert response.headers["strict-transport-security"].startswith("max-age=31536000")
    assert "secure" in response.headers["set-cookie"].lower()


@pytest.mark.parametrize("path", ["/cases", "/cases/1", "/studies", "/studies/new", "/studies/{sid}",
                                  "/studies/{sid}/agreement", "/jobs", "/jobs/new?task=1",
                                  "/imports", "/overview", "/docs", "/login"])
def test_no_inline_script_or_handler(client: TestClient, demo_engine: Engine, path: str) -> None:
    sid = make_study(demo_engine).study.id
    page = BeautifulSoup(client.get(path.format(sid=sid)).text, "html.parser")
    assert [s for s in page.select("script") if not s.get("src")] == []
    handlers = [(tag.name, name) for tag in page.find_all(True) for name in tag.attrs
                if name.lower().startswith("on")]
    assert handlers == []
    assert not [tag for tag in page.select("[href], [src]")
                if str(tag.get("href") or tag.get("src")).startswith(("http:", "https:", "//"))]


def test_the_standalone_report_has_a_policy_of_its_own(demo_engine: Engine, tmp_path: Path) -> None:
    client = token_client(create_app(server_settings(tmp_path, worker=False), demo_engine), demo_engine)
    sid = make_study(demo_engine).study.id
    policy = client.get(f"/studies/{sid}/report.html").headers["content-security-policy"]
    assert policy.startswith("default-src 'none'") and "script" not in policy
