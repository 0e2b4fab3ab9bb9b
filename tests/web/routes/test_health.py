"""/healthz and /readyz: no login, and nothing but each check's state."""

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.db import make_engine
from app.job_models import WorkerHeartbeat
from app.models import utcnow
from app.settings import Settings
from app.web.main import create_app


def _client(engine: Engine, settings: Settings) -> TestClient:
    return TestClient(create_app(settings, engine))


def _beat(engine: Engine, age: timedelta) -> None:
    with Session(engine) as session:
        session.add(WorkerHeartbeat(worker_id="w1", host="h", pid=1, beat_at=utcnow() - age))
        session.commit()


def test_liveness_needs_no_login(engine: Engine, settings: Settings) -> None:
    answer = _client(engine, settings).get("/healthz")
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}
    assert answer.headers["cache-control"] == "no-store"


def test_ready_with_a_current_schema_and_a_live_worker(engine: Engine, settings: Settings) -> None:
    client = _client(engine, settings)
    missing = client.get("/readyz")
    assert missing.status_code == 503 and missing.json()["checks"]["worker"] == "no heartbeat"
    _beat(engine, timedelta(minutes=5))
    assert client.get("/readyz").json()["checks"]["worker"] == "heartbeat stale"
    with Session(engine) as session:
        session.execute(text("UPDATE worker_heartbeat SET beat_at = :now"), {"now": utcnow()})
        session.commit()
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"database": "ok", "migrations": "ok",
                                                          "worker": "ok"}}


def test_not_ready_when_the_schema_is_behind(engine: Engine, settings: Settings) -> None:
    _beat(engine, timedelta(0))
    with Session(engine) as session:
        session.execute(text("UPDATE alembic_version SET version_num = '0010'"))
        session.commit()
    answer = _client(engine, settings).get("/readyz")
    assert answer.status_code == 503 and answer.json()["checks"]["migrations"] == "behind"


def test_an_unreachable_database_is_503_and_says_nothing_more(engine: Engine,
                                                              settings: Settings) -> None:
    gone = make_engine("postgresql+psycopg://reader:hunter22@127.0.0.1:9/study")
    answer = _client(gone, settings).get("/readyz")
    assert answer.status_code == 503
    assert answer.json() == {"status": "not ready", "checks": {
        "database": "unreachable", "migrations": "unknown", "worker": "unknown"}}
    assert "hunter22" not in answer.text and "127.0.0.1" not in answer.text
