"""Every page needs a session or a token; cookie sessions need CSRF tokens to change state."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.settings import Settings
from app.web.main import create_app
from tests.accounts import PASSWORD, add_user, login


def anonymous(engine: Engine, settings: Settings) -> TestClient:
    return TestClient(create_app(settings, engine))


def csrf_from(html: str) -> str:
    return BeautifulSoup(html, "html.parser").select_one('input[name="csrf_token"]')["value"]


def test_anonymous_requests_are_turned_away_by_kind(demo_engine: Engine, settings: Settings) -> None:
    client = anonymous(demo_engine, settings)
    page = client.get("/cases?modality=fundus", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"] == "/login?next=%2Fcases%3Fmodality%3Dfundus"
    api = client.get("/api/cases")
    assert api.status_code == 401 and "Bearer" in api.json()["detail"]
    swap = client.get("/cases", headers={"HX-Request": "true"}, follow_redirects=False)
    assert swap.status_code == 204 and swap.headers["HX-Redirect"].startswith("/login?next=")
    for url in ("/docs", "/openapi.json", "/imports", "/images/source/1", "/cases/1"):
        assert client.get(url, follow_redirects=False).status_code in (303, 401), url
    assert client.get("/login").status_code == 200
    assert client.get("/static/app.css").status_code == 200


def test_login_sets_a_safe_cookie_and_logout_ends_it(demo_engine: Engine, settings: Settings) -> None:
    add_user(demo_engine, "dr-a")
    client = anonymous(demo_engine, settings)
    form = client.get("/login?next=/cases?outcome=failed")
    response = client.post("/login", data={"name": "dr-a", "password": PASSWORD,
                                           "csrf_token": csrf_from(form.text),
                                           "next": "/cases?outcome=failed"},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/cases?outcome=failed"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    page = client.get("/cases")
    assert page.status_code == 200
    assert "dr-a" in BeautifulSoup(page.text, "html.parser").select_one("#account").text
    no_token = client.post("/logout", follow_redirects=False)
    assert no_token.status_code == 403
    out = client.post("/logout", data={"csrf_token": csrf_from(page.text)}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert client.get("/cases", follow_redirects=False).status_code == 303


def test_htmx_sends_the_csrf_token_in_a_header(demo_engine: Engine, settings: Settings) -> None:
    add_user(demo_engine, "dr-b")
    client = anonymous(demo_engine, settings)
    login(client, "dr-b")
    page = BeautifulSoup(client.get("/cases").text, "html.parser")
    header = page.body["hx-headers"]
    token = csrf_from(str(page))
    assert token in header
    out = client.post("/logout", headers={"X-CSRF-Token": token}, follow_redirects=False)
    assert out.status_code == 303


def test_wrong_password_re_renders_the_form_with_the_reason(demo_engine: Engine,
                                                           settings: Settings) -> None:
    add_user(demo_engine, "dr-c")
    client = anonymous(demo_engine, settings)
    for name in ("dr-c", "nobody"):
        token = csrf_from(client.get("/login").text)
        response = client.post("/login", data={"name": name, "password": "wrong password",
                                               "csrf_token": token})
        assert response.status_code == 401
        page = BeautifulSoup(response.text, "html.parser")
        assert "do not match" in page.select_one("#login-error").text
        assert page.select_one("#name")["value"] == name


def test_login_without_csrf_is_refused(demo_engine: Engine, settings: Settings) -> None:
    add_user(demo_engine, "dr-d")
    client = anonymous(demo_engine, settings)
    response = client.post("/login", data={"name": "dr-d", "password": PASSWORD})
    assert response.status_code == 403


def test_next_never_leads_off_site(demo_engine: Engine, settings: Settings) -> None:
    add_user(demo_engine, "dr-e")
    client = anonymous(demo_engine, settings)
    for target in ("//evil.example/x", "https://evil.example", "\\\\evil"):
        token = csrf_from(client.get("/login").text)
        response = client.post("/login", data={"name": "dr-e", "password": PASSWORD,
                                               "csrf_token": token, "next": target},
                               follow_redirects=False)
        assert response.headers["location"] == "/"


def test_a_wrong_bearer_token_is_401(demo_engine: Engine, settings: Settings) -> None:
    client = anonymous(demo_engine, settings)
    response = client.get("/api/cases", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_api_docs_are_served_to_accounts(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    assert "/api/cases" in client.get("/openapi.json").json()["paths"]
