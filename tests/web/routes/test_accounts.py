"""Accounts in the browser: add, reset a password (shown once), deactivate, describe; each
action in the audit log; bad input re-shows the form with its message; readers get 403."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.accounts.users import authenticate, find_user, issue_token, user_for_token
from app.models import ApiToken, AuditEvent, Role
from app.settings import Settings
from tests.accounts import add_user
from tests.web.routes.test_reading import as_user


def client_for(engine: Engine, settings: Settings, name: str, role: Role) -> TestClient:
    add_user(engine, name, role)
    return as_user(engine, settings, name, role)


def test_an_admin_runs_accounts_from_the_browser(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    made = admin.post("/accounts", data={"name": "dr-lee", "role": "reader", "password": ""})
    assert made.status_code == 201
    page = BeautifulSoup(made.text, "html.parser")
    first = page.select_one("#new-password").text
    assert len(first) >= 12
    with Session(demo_engine) as s:
        lee = authenticate(s, "dr-lee", first)
        assert lee is not None and lee.role == "reader" and lee.id is not None
        lee_id = lee.id
        token = issue_token(session=s, user=lee)
    assert page.select_one(f"#account-{lee_id}")["data-name"] == "dr-lee"
    # The password is on that one answer only.
    assert first not in admin.get("/accounts").text

    described = admin.post(f"/accounts/{lee_id}/qualification", data={
        "qualification": "radiologist, thoracic", "experience_years": "12", "board_certified": "yes"},
        follow_redirects=False)
    assert described.status_code == 303

    reset = admin.post(f"/accounts/{lee_id}/password")
    second = BeautifulSoup(reset.text, "html.parser").select_one("#new-password").text
    assert reset.status_code == 200 and second != first
    with Session(demo_engine) as s:
        assert authenticate(s, "dr-lee", first) is None and authenticate(s, "dr-lee", second)

    assert admin.post(f"/accounts/{lee_id}/deactivate", follow_redirects=False).status_code == 303
    with Session(demo_engine) as s:
        assert authenticate(s, "dr-lee", second) is None
        assert user_for_token(s, token) is None
        assert all(t.revoked_at for t in s.exec(select(ApiToken).where(ApiToken.user_id == lee_id)))
        lee = s.get(type(find_user(s, "chief")), lee_id)  # type: ignore[arg-type]
        assert lee is not None and lee.board_certified is True and lee.experience_years == 12
    page = BeautifulSoup(admin.get("/accounts").text, "html.parser")
    assert "deactivated" in page.select_one(f"#account-{lee_id} .account-state").text

    log = BeautifulSoup(admin.get("/accounts/audit").text, "html.parser")
    actions = [(r.select_one(".audit-action").text, r.select_one(".audit-subject").text)
               for r in log.select(".audit-line")]
    assert actions[:4] == [("deactivated", "dr-lee"), ("password set", "dr-lee"),
                           ("qualification recorded", "dr-lee"), ("token issued", "dr-lee")]
    assert ("account created", "dr-lee") in actions
    assert log.select(".audit-line")[0].select("td")[1].text == "chief"


def test_bad_account_input_keeps_the_form(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    for data, field, words in (({"name": "no spaces please", "role": "reader"}, "name", "must be"),
                               ({"name": "ok-name", "role": "reader", "password": "short"}, "password",
                                "at least 8"),
                               ({"name": "chief", "role": "admin"}, "name", "already exists"),
                               # A Cyrillic i (U+0456): looks like "chief", is another name.
                               ({"name": "ch\u0456ef", "role": "admin"}, "name", "must be"),
                               ({"name": "Chief", "role": "admin"}, "name", "already exists"),
                               ({"name": "café", "role": "reader"}, "name", "must be"),
                               ({"name": "x", "role": "superuser"}, "role", "choose one of")):
        refused = admin.post("/accounts", data=data)
        assert refused.status_code == 422, data
        page = BeautifulSoup(refused.text, "html.parser")
        assert words in page.select_one("#account-errors").text
        if field != "role":
            assert words in page.select_one(f"#error-{field}").text
        assert page.select_one("#account-form input[name=name]")["value"] == data["name"]
        assert page.select_one("#account-form input[name=password]").get("value") is None  # never echoed
    with Session(demo_engine) as s:
        assert find_user(s, "ok-name") is None
        assert all(find_user(s, n) is None for n in ("ch\u0456ef", "Chief", "café"))
        chief = find_user(s, "chief")
        assert chief is not None
    own = admin.post(f"/accounts/{chief.id}/deactivate")
    assert own.status_code == 422 and "your own account" in own.text
    bad_years = admin.post(f"/accounts/{chief.id}/qualification",
                           data={"qualification": "neuroradiologist", "experience_years": "ninety"})
    assert bad_years.status_code == 422
    row = BeautifulSoup(bad_years.text, "html.parser").select_one(f"#account-{chief.id}")
    assert row.select_one("input[name=qualification]")["value"] == "neuroradiologist"
    assert row.select_one("input[name=experience_years]")["value"] == "ninety"
    message = BeautifulSoup(bad_years.text, "html.parser").select_one("#error-experience_years")
    assert message.text == "enter a whole number"
    assert admin.post("/accounts/999999/password").status_code == 404
    with Session(demo_engine) as s:
        assert [e.action for e in s.exec(select(AuditEvent))] == ["token issued"]


def test_readers_cannot_reach_accounts(demo_engine: Engine, settings: Settings) -> None:
    reader = client_for(demo_engine, settings, "reader-x", Role.reader)
    assert reader.get("/accounts").status_code == 403
    assert reader.post("/accounts", data={"name": "sneaky", "role": "admin"}).status_code == 403
    assert reader.get("/accounts/audit").status_code == 403
