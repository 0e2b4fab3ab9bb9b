"""Liveness and readiness: is the database reachable, is its schema current, is a pipeline
worker alive. The answers name a check and say ok or not; nothing else is revealed."""

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.db import schema_revision
from app.job_models import WorkerHeartbeat
from app.models import as_utc, utcnow
from app.resources import MIGRATIONS_DIR

logger = logging.getLogger(__name__)
# Four missed beats (app/jobs/worker.py beats every 15 s) before the worker counts as gone.
HEARTBEAT_STALE = timedelta(seconds=60)


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, str]  # check name: "ok" or what is wrong, in a few words

    @property
    def ready(self) -> bool:
        return all(value == "ok" for value in self.checks.values())


@cache
def head_revision() -> str:
    """The newest migration this code ships (read once: it cannot change while running)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


def check_readiness(engine: Engine) -> Readiness:
    checks = {"database": "ok", "migrations": "ok", "worker": "ok"}
    try:
        with Session(engine) as session:
            session.execute(text("SELECT 1"))
            current = schema_revision(session)
            newest_beat = session.scalar(select(func.max(WorkerHeartbeat.beat_at)))
    except Exception:
        # Logged in full here; the answer says only that the database is not reachable.
        logger.warning("readiness: the database cannot be queried", exc_info=True)
        return Readiness({"database": "unreachable", "migrations": "unknown",
                          "worker": "unknown"})
    if current != head_revision():
        checks["migrations"] = "behind" if current else "not applied"
    if newest_beat is None:
        checks["worker"] = "no heartbeat"
    elif utcnow() - as_utc(newest_beat) > HEARTBEAT_STALE:
        checks["worker"] = "heartbeat stale"
    return Readiness(checks)
