"""The request guard: a body is never read for a caller who is not logged in, never past the
cap, and NUL is refused in paths, queries and text bodies."""

from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from starlette.exceptions import HTTPException

from app.settings import Settings
from app.web.main import create_app
from app.web.request_guard import MAX_BODY_BYTES, RequestGuard
from tests import aio
from tests.accounts import token_client
from tests.config import server_settings


def run_guard(scope: dict[str, Any], chunks: list[bytes]) -> tuple[int, Exception | None]:
    """Drive the guard around an app that reads the whole body; how many chunks were read."""
    pulled = {"n": 0}

    async def receive() -> dict[str, Any]:
        pulled["n"] += 1
        body = chunks[pulled["n"] - 1]
        return {"type": "http.request", "body": body, "more_body": pulled["n"] < len(chunks)}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass

    async def send(message: Any) -> None:
        pass

    base = {"type": "http", "method": "PUT", "path": "/read/1/1/draft", "query_string": b"",
            "headers": [], "session": {}}
    try:
        aio.run(RequestGuard(app)(base | scope, receive, send))
    except HTTPException as error:
        return pulled["n"], error
    return pulled["n"], None


def test_no_byte_is_read_without_credentials() -> None:
    pulled, error = run_guard({"headers": [(b"content-length", b"300000000")]}, [b"x" * 1000] * 3)
    assert pulled == 0 and isinstance(error, HTTPException) and error.status_code == 401


def test_a_declared_size_past_the_cap_is_refused_unread() -> None:
    pulled, error = run_guard({"session": {"user_id": 1},
                               "headers": [(b"content-length", str(MAX_BODY_BYTES + 1).encode())]},
                              [b"x"])
    assert pulled == 0 and isinstance(error, HTTPException) and error.status_code == 413


def test_a_streamed_body_stops_at_the_cap() -> None:
    chunk = b"x" * 65536
    pulled, error = run_guard({"headers": [(b"authorization", b"Bearer abc")]}, [chunk] * 100)
    assert isinstance(error, HTTPException) and error.status_code == 413
    assert pulled == MAX_BODY_BYTES // len(chunk) + 1


def test_nul_split_across_chunks_is_found() -> None:
    _, error = run_guard({"session": {"user_id": 1}, "headers": [
        (b"content-type", b"application/x-www-form-urlencoded")]}, [b"comment=a%", b"00b"])
    assert isinstance(error, HTTPException) and error.status_code == 422


def test_through_the_app(demo_engine: Engine, settings: Settings) -> None:
    app = create_app(settings, demo_engine)
    anonymous = TestClient(app, raise_server_exceptions=False)
    response = anonymous.put("/read/1/1/draft", content=b"{" * (5 * 1024 * 1024),
                             headers={"Content-Type": "application/json"})
    assert response.status_code == 401
    admin = token_client(app, demo_engine, raise_server_exceptions=False)
    big = admin.post("/studies", content=b"name=" + b"x" * (2 * MAX_BODY_BYTES),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert big.status_code == 413
    assert admin.get("/cases?q=a%00b").status_code == 422
    assert admin.post("/studies", data={"name": "a\x00"}).status_code == 422
    login = anonymous.post("/login", content=b"name=" + b"x" * 20_000,
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert login.status_code == 413


@pytest.mark.parametrize("path", ["/login", "/medbanana/login"])
def test_the_login_form_is_read_under_a_root_path(demo_engine: Engine, tmp_path: Path,
                                                  path: str) -> None:
    """Behind a proxy that strips the prefix the path is bare; one that keeps it sends it."""
    app = create_app(server_settings(tmp_path, root_path="/medbanana", worker=False), demo_engine)
    response = TestClient(app, raise_server_exceptions=False).post(
        path, data={"name": "nobody", "password": "wrong password"}, follow_redirects=False)
    assert response.status_code != 401  # the form was read: a refused login, not "log in first"
    pulled, error = run_guard({"path": path, "root_path": "/medbanana"}, [b"name=x"])
    assert error is None and pulled == 1


def multipart(fields: dict[str, bytes]) -> tuple[bytes, str]:
    """A multipart form as a browser sends it."""
    boundary = "guard-test-boundary"
    parts = []
    for name, value in fields.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n'
        parts.append(head.encode() + b"\r\n" + value + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_nul_in_any_form_encoding_is_a_422_on_both_databases(
        request: pytest.FixtureRequest, database: str, settings: Settings) -> None:
    """A NUL in a multipart value, or in a form whose media type is written in mixed case,
    is refused before any route: never a 500 on PostgreSQL,
    never stored on SQLite."""
    engine: Engine = request.getfixturevalue("demo_engine" if database == "sqlite" else "pg_engine")
    admin = token_client(create_app(settings, engine), engine, raise_server_exceptions=False)
    raw, raw_type = multipart({"name": b"study\x00one"})
    sent = [
        ("/studies", raw, raw_type),
        ("/studies", raw.replace(b'name="name"', b'name="na\x00me"'), raw_type),
        ("/studies", b"name=study%00one", "Application/X-WWW-Form-Urlencoded"),
        ("/accounts/1/qualification", raw.replace(b'"name"', b'"specialty"'), raw_type),
        ("/accounts/1/qualification", b"specialty=a%00", "application/x-www-form-URLENCODED"),
    ]
    for path, body, media in sent:
        response = admin.post(path, content=body, headers={"Content-Type": media})
        assert response.status_code == 422, (path, media, response.status_code)
        assert "NUL" in response.text, (path, media)
    # A multipart form without a NUL still reaches its route (which refuses it for the
    # fields it lacks, keeping what was typed).
    clean, clean_type = multipart({"name": b"fine"})
    kept = admin.post("/studies", content=clean, headers={"Content-Type": clean_type})
    assert kept.status_code == 422 and "NUL" not in kept.text
    assert BeautifulSoup(kept.text, "html.parser").select_one('input[name="name"]')["value"] == "fine"
