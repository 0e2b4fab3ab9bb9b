"""Gemini's quotas, per model, shared by every job and every worker through the database.

Gemini counts requests per minute, requests per day and tokens per minute, separately for
each model (the text and the image model have their own). Each model has a row in
``rate_limit``; a worker that wants to call the model updates that row (which takes its
lock: a row lock on PostgreSQL, the write lock on SQLite), reads the model's recent calls,
and records its own only when every limit leaves room. So the check and the record are one
step for all workers together, and no sliding window ever holds more than allowed, whatever
the number of jobs and machines. A call is recorded with the tokens it is expected to use
and corrected to what the answer reports.

The service counts a call when it arrives, which is after it was let through here and
before its answer comes back. So a call counts here for as long as it is in flight, and then
from the moment its answer came back: a window never lets a call go while the service may
still count an earlier one, and a quota set equal to the service's draws no 429.
"""

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import end_if_stalled, insert_new
from app.job_models import Job, RateCall, RateLimit
from app.jobs.lease import Displaced, Lease
from app.models import as_utc, utcnow
from pipeline.loop import CancelledWhileWaiting

logger = logging.getLogger(__name__)
# Waits shorter than this are the limiter's everyday pacing; longer ones are shown on the
# job's page as "waiting for quota until".
SHOWN_WAIT = 5.0
# Records older than this are of no use to any window (the longest is a day); pruned now
# and then.
KEEP = timedelta(hours=25)
# A call still marked in flight after this long belongs to a worker that died mid-call (the
# backend's own timeout is 300 s, and a cancelled call is marked as returned): it stops
# holding the window then.
FLIGHT_LIMIT = timedelta(minutes=6)
# How often a call waiting for quota looks for its job's cancel, in seconds.
CANCEL_LOOK = 0.25


@dataclass(frozen=True)
class Quota:
    """The limits of one model, as the Gemini project's quota page states them."""

    per_minute: int | None = None
    per_day: int | None = None
    tokens_per_minute: int | None = None
    # The lengths of the "minute" and the "day": tests shrink them.
    minute: float = 60.0
    day: float = 86_400.0

    @property
    def limited(self) -> bool:
        return bool(self.per_minute or self.per_day or self.tokens_per_minute)


class CallLimiter:
    """``await acquire(model, tokens)`` before each call; returns when the call may go, with
    the ticket to correct its tokens by (``settle``)."""

    def __init__(self, engine: Engine, quota: Quota, job_id: int | None = None, *,
                 record: bool = False, lease: Lease | None = None,
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        self.engine, self.quota, self.job_id = engine, quota, job_id
        # The job's cancel, looked at while a call waits for quota: a per-day limit can keep
        # it waiting for hours, and a cancelled job must stop at once.
        self.cancelled = cancelled
        # Checked before every call: a worker that lost its job must not pay for calls whose
        # answers it can no longer write (it made 8 calls in 2 s after it knew).
        self.lease = lease
        # Record every call even without limits of this job's own: the other jobs' limiters
        # count them against the same model (a Gemini job's calls; an offline job has none).
        self.record = record
        self._calls = 0
        self._shown = False  # whether this limiter set the job's waiting_until

    async def acquire(self, model: str, tokens: int = 0) -> int | None:
        """Raises Displaced, before any call goes, when the job is no longer this worker's,
        and CancelledWhileWaiting when the job is cancelled while the call waits."""
        if not self.quota.limited:
            if self.record:
                return await asyncio.to_thread(self._record, model, tokens)
            if self.lease is not None:
                await asyncio.to_thread(self._check_lease)
            return None
        while True:
            ticket, wait = await asyncio.to_thread(self._try, model, tokens)
            if ticket is not None:
                if self._shown:
                    await asyncio.to_thread(self._clear_wait)
                return ticket
            await self.waiting(wait)
            # A little jitter, so that the workers turned away together do not return
            # together.
            await self._sleep(wait + random.uniform(0.0, min(1.0, self.quota.minute / 20)))

    async def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.cancelled():
                raise CancelledWhileWaiting()
            await asyncio.sleep(min(CANCEL_LOOK, left))
        if self.cancelled():
            raise CancelledWhileWaiting()

    async def waiting(self, seconds: float) -> None:
        """Say on the job that its calls wait for quota, when the wait is a long one."""
        if self.job_id is not None and seconds >= SHOWN_WAIT:
            await asyncio.to_thread(self._show_wait, utcnow() + timedelta(seconds=seconds))

    def gate(self, model: str, tokens: int) -> "Gate":
        """A step's way through this limiter (pipeline/ports.py's Quota)."""
        return Gate(self, model, tokens)

    def settle(self, ticket: int, tokens: int | None) -> None:
        """The call came back (answered or failed): it counts from now, with the tokens it
        used when they are known."""
        values: dict[str, object] = {"at": utcnow(), "in_flight": False}
        if tokens is not None:
            values["tokens"] = tokens
        with Session(self.engine) as session:
            session.execute(update(RateCall).where(col(RateCall.id) == ticket).values(**values))
            session.commit()

    def release(self, ticket: int) -> None:
        """No call was made on this ticket: it leaves every window at once."""
        with Session(self.engine) as session:
            session.execute(delete(RateCall).where(col(RateCall.id) == ticket))
            session.commit()

    def _check_lease(self, session: Session | None = None) -> None:
        if self.lease is None:
            return
        if session is None:
            with Session(self.engine) as own:
                self._check_lease(own)
            return
        current = session.scalar(select(col(Job.lease)).where(col(Job.id) == self.lease.job_id))
        if current != self.lease.token:
            raise Displaced(f"job {self.lease.job_id} was taken over by another worker "
                            f"(this worker's lease {self.lease.token} is no longer current): "
                            "no further call is made")

    def _record(self, model: str, tokens: int) -> int | None:
        with Session(self.engine) as session:
            self._check_lease(session)
            record = RateCall(model=model, at=utcnow(), tokens=tokens, in_flight=True)
            session.add(record)
            session.commit()
            return record.id

    def _try(self, model: str, tokens: int) -> tuple[int | None, float]:
        """(the call's ticket, 0) when it was recorded; else (None, seconds to wait)."""
        quota = self.quota
        with Session(self.engine) as session:
            end_if_stalled(session)  # every worker's calls wait on this lock
            self._check_lease(session)
            if not self._lock(session, model):  # the model's first call on this database
                insert_new(session, RateLimit, [RateLimit(model=model)])
                session.commit()
                self._lock(session, model)
            now = utcnow()
            waits = [0.0]
            # A little longer than the window: the service counts arrivals, which come a
            # few milliseconds after the moment recorded here.
            minute_ago = now - timedelta(seconds=quota.minute * 1.02 + 0.05)
            flying = (col(RateCall.in_flight).is_(True)
                      & (col(RateCall.at) > now - FLIGHT_LIMIT))
            if quota.per_minute or quota.tokens_per_minute:
                calls, oldest, used = session.execute(
                    select(func.count(), func.min(RateCall.at), func.sum(RateCall.tokens))
                    .where(col(RateCall.model) == model,
                           (col(RateCall.at) > minute_ago) | flying)).one()
                over_calls = quota.per_minute is not None and calls >= quota.per_minute
                # A call bigger than the whole budget still goes, alone, or it never would.
                over_tokens = (quota.tokens_per_minute is not None and calls > 0
                               and (used or 0) + tokens > quota.tokens_per_minute)
                if over_calls or over_tokens:
                    waits.append(_until_out(oldest, minute_ago))
            if quota.per_day:
                day_ago = now - timedelta(seconds=quota.day * 1.0001 + 0.05)
                calls, oldest = session.execute(
                    select(func.count(), func.min(RateCall.at))
                    .where(col(RateCall.model) == model, (col(RateCall.at) > day_ago) | flying)).one()
                if calls >= quota.per_day:
                    waits.append(_until_out(oldest, day_ago))
            if max(waits) > 0:
                session.rollback()
                return None, max(waits)
            record = RateCall(model=model, at=now, tokens=tokens, in_flight=True)
            session.add(record)
            self._calls += 1
            if self._calls % 500 == 0:
                session.execute(delete(RateCall).where(col(RateCall.at) < now - KEEP))
            session.flush()
            ticket = record.id
            session.commit()
            return ticket, 0.0

    def _show_wait(self, until: datetime) -> None:
        with Session(self.engine) as session:
            session.execute(update(Job).where(col(Job.id) == self.job_id).values(
                waiting_until=func.max(func.coalesce(Job.waiting_until, until), until)
                if self.engine.dialect.name == "sqlite"
                else func.greatest(func.coalesce(Job.waiting_until, until), until)))
            session.commit()
        self._shown = True

    def _clear_wait(self) -> None:
        with Session(self.engine) as session:
            session.execute(update(Job).where(col(Job.id) == self.job_id,
                                              col(Job.waiting_until) <= utcnow())
                            .values(waiting_until=None))
            session.commit()
        self._shown = False

    @staticmethod
    def _lock(session: Session, model: str) -> bool:
        """Take the model's lock until commit (an UPDATE locks its row on PostgreSQL and the
        database on SQLite); False when the model has no row yet."""
        touched = session.execute(update(RateLimit).where(col(RateLimit.model) == model)
                                  .values(model=model))
        return bool(touched.rowcount)  # type: ignore[attr-defined]


def _until_out(oldest: datetime | None, window_start: datetime) -> float:
    """Seconds until the oldest call in the window leaves it."""
    if oldest is None:
        return 0.05
    return max(0.05, (as_utc(oldest) - window_start).total_seconds())


@dataclass(frozen=True)
class Gate:
    """One step's way through the limiter: the model it calls and the tokens it expects."""

    limiter: CallLimiter
    model: str
    tokens: int

    async def enter(self) -> int | None:
        return await self.limiter.acquire(self.model, self.tokens)

    async def used(self, ticket: int | None, tokens: int | None) -> None:
        if ticket is not None:
            await asyncio.to_thread(self.limiter.settle, ticket, tokens)

    async def waiting(self, seconds: float) -> None:
        await self.limiter.waiting(seconds)

    async def release(self, ticket: int | None) -> None:
        if ticket is not None:
            await asyncio.to_thread(self.limiter.release, ticket)
