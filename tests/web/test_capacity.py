"""Past capacity the server waits or says 503, and never locks up (issue 54).

Between 50 and 60 readers a real server stopped serving: every request thread waited for a
pooled connection, and the connections belonged to finished requests whose session close
waited for one of those same threads. Nothing moved until the pool's 30 s timeout, and
every stuck request was a 500."""

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import issue_token
from app.models import Role
from app.settings import Settings
from app.web.main import create_app
from tests.accounts import add_user
from tests.test_concurrency import serve


@pytest.fixture
def small_pool(demo_engine: Engine) -> Iterator[Engine]:
    """The demo database behind a pool of six connections, given up on after 3 s: fewer than
    the sixty readers, and than anyio's forty threads."""
    engine = create_engine(demo_engine.url, pool_size=6, max_overflow=0, pool_timeout=3,
                           connect_args={"check_same_thread": False})
    yield engine
    engine.dispose()


async def _burst(base: str, token: str, clients: int, rounds: int) -> Counter[int]:
    statuses: Counter[int] = Counter()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"},
                                 timeout=60, limits=limits) as client:
        async def reader() -> None:
            for _ in range(rounds):
                statuses[(await client.get("/api/cases?limit=5")).status_code] += 1

        await asyncio.gather(*(reader() for _ in range(clients)))
    return statuses


def test_more_readers_than_request_threads_never_lock_the_server(
        small_pool: Engine, settings: Settings, tmp_path: Path) -> None:
    """Sixty readers at once, more than the server's request threads, on a pool of six
    connections: every request is answered, none with a 500, and quickly. (Before, with
    anyio's 40 threads, it stood still until the pool's timeout: 500s.)"""
    user = add_user(small_pool, "load-admin", Role.admin)
    with Session(small_pool) as session:
        token = issue_token(session=session, user=user)
    for base in serve(small_pool, settings.model_copy(update={"request_threads": 4})):
        statuses = asyncio.run(_burst(base, token, clients=60, rounds=3))
        assert statuses[500] == 0, statuses
        # Waited its turn, or told to come back: never a lock-up.
        assert set(statuses) <= {200, 503}, statuses
        assert statuses[200] >= 150, statuses
        # And a lone reader right after is served (the client's timeout only catches a hang).
        assert httpx.get(f"{base}/api/cases?limit=5", timeout=30,
                         headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_request_that_waits_too_long_for_its_turn_is_told_to_come_back() -> None:
    from app.web.admission import AdmissionGate

    async def slow(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        await asyncio.sleep(0.5)
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    async def two_at_once() -> list[httpx.Response]:
        gate = AdmissionGate(slow, capacity=1, wait=0.1)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=gate),
                                     base_url="http://test") as client:
            return list(await asyncio.gather(client.get("/"), client.get("/"),
                                             client.get("/healthz")))

    found = asyncio.run(two_at_once())
    health = found.pop()
    answers = sorted(found, key=lambda r: r.status_code)
    assert [r.status_code for r in answers] == [200, 503]
    # A health check is never held back: a busy server is an alive one.
    assert health.status_code == 200
    assert answers[1].headers["retry-after"] == "5" and "try again" in answers[1].text


def test_no_free_database_connection_is_a_503_not_a_500(demo_engine: Engine, settings: Settings) -> None:
    """An engine whose pool is taken (a database that stopped answering): come back later."""
    from tests.accounts import token_client

    engine = create_engine(demo_engine.url, pool_size=1, max_overflow=0, pool_timeout=0.2,
                           connect_args={"check_same_thread": False})
    client = token_client(create_app(settings, engine), engine, raise_server_exceptions=False)
    held = engine.connect()  # the only connection, held
    try:
        response = client.get("/api/cases?limit=1")
    finally:
        held.close()
        engine.dispose()
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.json()["detail"].startswith("the server is busy")
