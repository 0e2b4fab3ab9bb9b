"""Calls per minute, per model, shared by every job and every worker through the database.

Each model has a row in ``rate_limit``; a worker that wants to call the model updates that
row (which takes its lock: a row lock on PostgreSQL, the write lock on SQLite), counts the
model's calls in the last window, and records its own only when that leaves room. So the
count and the insert are one step for all workers together, and no sliding window of
``window`` seconds ever holds more than ``per_window`` calls of one model, whatever the
number of jobs and machines. The two models (text and image) have separate quotas at
Gemini, and separate rows here.
"""

import asyncio
import logging
import random
from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import insert_new
from app.models import RateCall, RateLimit, as_utc, utcnow

logger = logging.getLogger(__name__)
# Records older than this are of no use to any window; pruned now and then.
KEEP = timedelta(hours=1)


class CallLimiter:
    """``await acquire(model)`` before each call; returns when the call may go."""

    def __init__(self, engine: Engine, per_window: int | None, window: float = 60.0) -> None:
        self.engine, self.per_window, self.window = engine, per_window, window
        self._calls = 0

    async def acquire(self, model: str) -> None:
        if not self.per_window:
            return
        while True:
            wait = await asyncio.to_thread(self._try, model)
            if wait is None:
                return
            # A little jitter, so that the workers turned away together do not return
            # together.
            await asyncio.sleep(wait + random.uniform(0.0, min(1.0, self.window / 20)))

    def _try(self, model: str) -> float | None:
        """None when the call was recorded; else the seconds until the window has room."""
        assert self.per_window is not None
        with Session(self.engine) as session:
            if not self._lock(session, model):  # the model's first call on this database
                insert_new(session, RateLimit, [RateLimit(model=model)])
                session.commit()
                self._lock(session, model)
            now = utcnow()
            # A little longer than the window: the service counts arrivals, which come a
            # few milliseconds after the moment recorded here.
            since = now - timedelta(seconds=self.window * 1.02 + 0.05)
            recent = session.execute(
                select(func.count(), func.min(RateCall.at))
                .where(col(RateCall.model) == model, col(RateCall.at) > since)).one()
            if recent[0] >= self.per_window:
                session.rollback()
                oldest = as_utc(recent[1])
                return max(0.05, (oldest - since).total_seconds())
            session.add(RateCall(model=model, at=now))
            self._calls += 1
            if self._calls % 500 == 0:
                session.execute(delete(RateCall).where(col(RateCall.at) < now - KEEP))
            session.commit()
            return None

    @staticmethod
    def _lock(session: Session, model: str) -> bool:
        """Take the model's lock until commit (an UPDATE locks its row on PostgreSQL and the
        database on SQLite); False when the model has no row yet."""
        touched = session.execute(update(RateLimit).where(col(RateLimit.model) == model)
                                  .values(model=model))
        return bool(touched.rowcount)  # type: ignore[attr-defined]
