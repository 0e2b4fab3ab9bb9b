"""Sessions end when they should: logout and a password change end every copy of a cookie;
deactivated accounts, revoked and expired tokens are refused; ids are never handed on;
guessing passwords gets locked out (security review, finding 4 and 6)."""

from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError
from sqlmodel import Session, select

from app.accounts import login_throttle
from app.accounts.users import deactivate_user, issue_token, revoke_token, set_password, user_for_token
from app.models import ApiToken, LoginThrottle, Role, User
from app.settings import Settings
from app.web.main import create_app
from tests.accounts import PASSWORD, add_user, login
from tests.web.routes.test_auth import csrf_from


def _browser(engine: Engine, settings: Settings, address: str = "testclient") -> TestClient:
    return TestClient(create_app(settings, engine), client=(address, 50000))


def _copy_cookies(source: TestClient, engine: Engine, settings: Settings) -> TestClient:
    copy = _browser(engine, settings)
    for name, value in source.cookies.items():
        copy.cookies.set(name, value)
    return copy


def test_logout_ends_every_copy_of_the_cookie(demo_engine: Engine, settings: Settings) -> None:
    add_user(demo_engine, "dr-a")
    browser = _browser(demo_engine, settings)
    login(browser, "dr-a")
    stolen = _copy_cookies(browser, demo_engine, settings)
    assert stolen.get("/cases", follow_redirects=False).status_code == 200
    page = browser.get("/cases")
    assert browser.post("/logout", data={"csrf_token": csrf_from(page.text)},
                        follow_redirects=False).status_code == 303
    assert stolen.get("/cases", follow_redirects=False).status_code == 303


def test_a_password_change_ends_every_session(demo_engine: Engine, settings: Settings) -> None:
    user = add_user(demo_engine, "dr-b")
    browser = _browser(demo_engine, settings)
    login(browser, "dr-b")
    with Session(demo_engine) as session:
        set_password(session=session, user=session.get(User, user.id), password="a new long password")
    assert browser.get("/cases", follow_redirects=False).status_code == 303


def test_a_deactivated_account_loses_cookie_token_and_login(demo_engine: Engine,
                                                            settings: Settings) -> None:
    user = add_user(demo_engine, "dr-c")
    with Session(demo_engine) as session:
        token = issue_token(session=session, user=session.get(User, user.id))
    browser = _browser(demo_engine, settings)
    login(browser, "dr-c")
    with Session(demo_engine) as session:
        deactivate_user(session=session, user=session.get(User, user.id))
    assert browser.get("/cases", follow_redirects=False).status_code == 303
    scripted = TestClient(create_app(settings, demo_engine),
                          headers={"Authorization": f"Bearer {token}"})
    assert scripted.get("/api/cases").status_code == 401
    fresh = _browser(demo_engine, settings)
    form = fresh.get("/login")
    refused = fresh.post("/login", data={"name": "dr-c", "password": PASSWORD,
                                         "csrf_token": csrf_from(form.text)})
    assert refused.status_code == 401


def test_a_deleted_users_cookie_never_signs_in_as_the_next_user(demo_engine: Engine,
                                                                settings: Settings) -> None:
    old = add_user(demo_engine, "dr-old")
    browser = _browser(demo_engine, settings)
    login(browser, "dr-old")
    with Session(demo_engine) as session, pytest.raises(DatabaseError, match="never deleted"):
        session.execute(text("DELETE FROM app_user WHERE id = :id"), {"id": old.id})
    new = add_user(demo_engine, "dr-new")
    assert new.id != old.id
    page = browser.get("/cases")
    assert "dr-old" in page.text and "dr-new" not in page.text


def test_tokens_expire_are_revoked_and_record_their_use(engine: Engine) -> None:
    user = add_user(engine, "script", Role.admin)
    with Session(engine) as session:
        owner = session.get(User, user.id)
        token = issue_token(session=session, user=owner, name="nightly", expires_in_days=1)
        assert user_for_token(session, token) is not None
        row = session.exec(select(ApiToken)).one()
        assert row.name == "nightly" and row.last_used_at is not None
        row.expires_at = row.created_at - timedelta(seconds=1)
        session.add(row)
        session.commit()
        assert user_for_token(session, token) is None
        second = issue_token(session=session, user=owner)
        second_row = session.exec(select(ApiToken).where(ApiToken.id != row.id)).one()
        revoke_token(session=session, token_id=second_row.id)
        assert user_for_token(session, second) is None


def test_guessing_is_locked_out_by_account_and_address_with_back_off(demo_engine: Engine, settings: Settings,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    add_user(demo_engine, "dr-d")
    browser = _browser(demo_engine, settings)
    form = browser.get("/login")
    token = csrf_from(form.text)
    for _ in range(login_throttle.PAIR_LIMIT):
        answer = browser.post("/login", data={"name": "dr-d", "password": "wrong guess!",
                                              "csrf_token": token})
        assert answer.status_code == 401
    locked = browser.post("/login", data={"name": "dr-d", "password": PASSWORD, "csrf_token": token})
    assert locked.status_code == 429
    assert 0 < int(locked.headers["Retry-After"]) <= login_throttle.FIRST_LOCK.total_seconds()
    # The form keeps the name and says why, and the right password waits for the lock.
    assert 'value="dr-d"' in locked.text and "Try again in" in locked.text
    assert any("login locked for pair:dr-d@testclient" in r.getMessage() for r in caplog.records)
    with Session(demo_engine) as session:
        row = session.get(LoginThrottle, "pair:dr-d@testclient")
        row.locked_until = None  # the lock ran out
        session.add(row)
        session.commit()
    # One more wrong guess after a lock locks again, for twice as long.
    again = browser.post("/login", data={"name": "dr-d", "password": "wrong again!",
                                         "csrf_token": token})
    assert again.status_code == 401
    longer = browser.post("/login", data={"name": "dr-d", "password": PASSWORD, "csrf_token": token})
    assert longer.status_code == 429
    assert int(longer.headers["Retry-After"]) > login_throttle.FIRST_LOCK.total_seconds()


def test_one_address_guessing_many_accounts_is_locked(demo_engine: Engine, settings: Settings) -> None:
    browser = _browser(demo_engine, settings)
    token = csrf_from(browser.get("/login").text)
    statuses = [browser.post("/login", data={"name": f"guess-{i}", "password": "x" * 9,
                                             "csrf_token": token}).status_code
                for i in range(login_throttle.ADDRESS_LIMIT + 1)]
    assert statuses[:login_throttle.ADDRESS_LIMIT] == [401] * login_throttle.ADDRESS_LIMIT
    assert statuses[-1] == 429


def test_a_stranger_cannot_lock_a_known_user_out(demo_engine: Engine, settings: Settings) -> None:
    """Wrong passwords for dr-e from one address lock that address's tries at dr-e only:
    dr-e, at their own desk, logs in with the right password at once."""
    add_user(demo_engine, "dr-e")
    stranger = _browser(demo_engine, settings, "203.0.113.9")
    token = csrf_from(stranger.get("/login").text)
    statuses = [stranger.post("/login", data={"name": "dr-e", "password": "wrong guess!",
                                               "csrf_token": token}).status_code
                for _ in range(40)]
    assert statuses[:login_throttle.PAIR_LIMIT] == [401] * login_throttle.PAIR_LIMIT
    assert set(statuses[login_throttle.PAIR_LIMIT:]) == {429}
    own = _browser(demo_engine, settings, "10.1.2.3")
    own_token = csrf_from(own.get("/login").text)
    answer = own.post("/login", data={"name": "dr-e", "password": PASSWORD,
                                      "csrf_token": own_token}, follow_redirects=False)
    assert answer.status_code == 303


def test_a_shared_address_does_not_lock_out_the_right_password(demo_engine: Engine,
                                                                settings: Settings) -> None:
    """Behind a proxy that sends no X-Forwarded-For everyone has the proxy's address: once
    it is locked for failures spread over many names, a user who types the right password
    is still let in; the names that failed there, and unknown names, are not."""
    add_user(demo_engine, "dr-f")
    add_user(demo_engine, "dr-g")
    proxy = _browser(demo_engine, settings, "10.0.0.5")
    token = csrf_from(proxy.get("/login").text)

    def attempt(name: str, password: str) -> int:
        return proxy.post("/login", data={"name": name, "password": password, "csrf_token": token},
                          follow_redirects=False).status_code

    for i in range(login_throttle.ADDRESS_LIMIT):
        assert attempt(f"guess-{i}", "x" * 9) == 401
    assert attempt("guess-new", "x" * 9) == 429  # no account: the address's lock holds
    assert attempt("guess-1", "x" * 9) == 429  # failed here before
    assert attempt("dr-f", PASSWORD) == 303
    # A user who mistyped here while the address is locked waits for the lock.
    proxy = _browser(demo_engine, settings, "10.0.0.5")
    token = csrf_from(proxy.get("/login").text)
    assert attempt("dr-g", "mistyped!") == 401
    assert attempt("dr-g", PASSWORD) == 429


def test_no_forwarded_header_is_believed_unless_a_proxy_is_named(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """By default the server believes no X-Forwarded-For from anyone (uvicorn alone would
    believe 127.0.0.1, and any local process could choose the address its guesses count
    against); a named proxy's are believed."""
    import uvicorn
    from typer.testing import CliRunner

    from app.cli.root import cli
    from app.settings import get_settings

    seen: list[dict[str, object]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.append(kw))
    monkeypatch.setenv("MEDBANANA_DATABASE_URL", f"sqlite:///{tmp_path / 'a.db'}")
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("MEDBANANA_DEMO", "true")
    monkeypatch.delenv("MEDBANANA_FORWARDED_ALLOW_IPS", raising=False)
    runner = CliRunner()
    get_settings.cache_clear()
    assert runner.invoke(cli, ["serve"]).exit_code == 0
    monkeypatch.setenv("MEDBANANA_FORWARDED_ALLOW_IPS", "10.0.0.5")
    get_settings.cache_clear()
    assert runner.invoke(cli, ["serve"]).exit_code == 0
    assert [(s["proxy_headers"], s["forwarded_allow_ips"]) for s in seen] == [
        (False, None), (True, "10.0.0.5")]


def test_a_browser_that_logged_in_before_still_gets_in_when_strangers_lock_the_account(
        demo_engine: Engine, settings: Settings) -> None:
    """Fifty addresses guessing lock the account itself, the right password included; a
    browser with the account's device cookie is counted on its own and gets in."""
    add_user(demo_engine, "dr-h")
    own = _browser(demo_engine, settings, "10.1.2.4")
    own_token = csrf_from(own.get("/login").text)
    first = own.post("/login", data={"name": "dr-h", "password": PASSWORD,
                                     "csrf_token": own_token}, follow_redirects=False)
    assert first.status_code == 303 and own.cookies.get("medbanana_device")
    cookie = first.headers["set-cookie"]
    assert "medbanana_device=" in cookie and "HttpOnly" in cookie
    for n in range(login_throttle.ACCOUNT_LIMIT):  # a stranger with fifty addresses
        stranger = _browser(demo_engine, settings, f"198.51.100.{n + 1}")
        token = csrf_from(stranger.get("/login").text)
        stranger.post("/login", data={"name": "dr-h", "password": f"guess {n}!",
                                      "csrf_token": token})
    newcomer = _browser(demo_engine, settings, "10.9.9.9")
    token = csrf_from(newcomer.get("/login").text)
    assert newcomer.post("/login", data={"name": "dr-h", "password": PASSWORD,
                                         "csrf_token": token}).status_code == 429
    own.post("/logout", headers={"X-CSRF-Token": own_token})
    own_token = csrf_from(own.get("/login").text)
    again = own.post("/login", data={"name": "dr-h", "password": PASSWORD,
                                     "csrf_token": own_token}, follow_redirects=False)
    assert again.status_code == 303
    # A device cookie forged, or made for another account, counts for nothing.
    forged = _browser(demo_engine, settings, "10.9.9.10")
    forged.cookies.set("medbanana_device", "eyJ1IjoxLCJkIjoiYWFhYWFhYWFhYWFhYWFhYWFhYWEifQ.xxxx")
    token = csrf_from(forged.get("/login").text)
    assert forged.post("/login", data={"name": "dr-h", "password": PASSWORD,
                                       "csrf_token": token}).status_code == 429


def test_a_shared_workstation_keeps_every_account_it_logged_in_to_safe_from_lock_out(
        demo_engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """One browser, two radiologists in turn: strangers who lock both accounts shut out
    neither there (the cookie kept only the last account before)."""
    monkeypatch.setattr(login_throttle, "ACCOUNT_LIMIT", 3)  # each login hashes a password
    for name in ("dr-j", "dr-k"):
        add_user(demo_engine, name)
    shared = _browser(demo_engine, settings, "10.1.2.5")

    def log_in(name: str) -> int:
        token = csrf_from(shared.get("/login").text)
        answer = shared.post("/login", data={"name": name, "password": PASSWORD,
                                             "csrf_token": token}, follow_redirects=False)
        shared.post("/logout", headers={"X-CSRF-Token": token})
        return answer.status_code

    assert log_in("dr-j") == 303 and log_in("dr-k") == 303
    for name in ("dr-j", "dr-k"):
        for n in range(login_throttle.ACCOUNT_LIMIT):
            stranger = _browser(demo_engine, settings, f"198.51.100.{n + 1}")
            token = csrf_from(stranger.get("/login").text)
            stranger.post("/login", data={"name": name, "password": f"guess {n}!",
                                          "csrf_token": token})
    newcomer = _browser(demo_engine, settings, "10.9.9.11")
    token = csrf_from(newcomer.get("/login").text)
    assert newcomer.post("/login", data={"name": "dr-j", "password": PASSWORD,
                                         "csrf_token": token}).status_code == 429
    assert log_in("dr-j") == 303 and log_in("dr-k") == 303
