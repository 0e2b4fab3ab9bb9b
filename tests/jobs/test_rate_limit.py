"""The call limiter: per model, shared through the database by every limiter (every job and
worker), and no sliding window ever holds more calls than allowed."""

import asyncio
import time

import pytest
from sqlalchemy.engine import Engine

from app.jobs.rate_limit import CallLimiter, Quota
from tests import aio

WINDOW, ALLOWED = 1.0, 3


def busiest_window(times: list[float]) -> int:
    return max(sum(1 for u in times if 0 <= u - t < WINDOW) for t in times)


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_workers_share_each_models_limit(request: pytest.FixtureRequest, database: str) -> None:
    engine: Engine = request.getfixturevalue("engine" if database == "sqlite" else "pg_engine")
    workers = [CallLimiter(engine, Quota(per_minute=ALLOWED, minute=WINDOW)) for _ in range(2)]
    let_through: dict[str, list[float]] = {"text-model": [], "image-model": []}

    async def call(limiter: CallLimiter, model: str) -> None:
        ticket = await limiter.acquire(model)
        let_through[model].append(time.monotonic())
        assert ticket is not None
        limiter.settle(ticket, None)  # answered at once

    async def everyone() -> None:
        await asyncio.gather(*(call(workers[i % 2], model) for i in range(9)
                               for model in let_through))

    start = time.monotonic()
    aio.run(everyone())
    for model, times in let_through.items():
        assert len(times) == 9, model
        assert busiest_window(times) <= ALLOWED, model
    # 9 calls at 3 a second take at least two full windows.
    assert time.monotonic() - start >= 2.0
    # Each model has its own limit: neither waited for the other's windows (the first call
    # of each went before the fourth of the other, which had to wait for a window).
    assert let_through["image-model"][0] < let_through["text-model"][3]
    assert let_through["text-model"][0] < let_through["image-model"][3]


def test_no_limit_lets_everything_through_at_once(engine: Engine) -> None:
    """With no quota a call is never checked, waited or recorded."""
    from sqlmodel import Session, select

    from app.job_models import RateCall

    limiter = CallLimiter(engine, Quota())

    async def fifty() -> list[int | None]:
        return await asyncio.gather(*(limiter.acquire("m") for _ in range(50)))

    assert aio.run(fifty()) == [None] * 50
    with Session(engine) as session:
        assert session.exec(select(RateCall)).all() == []


def test_a_daily_quota_holds_calls_until_the_day_has_room(engine: Engine) -> None:
    limiter = CallLimiter(engine, Quota(per_day=4, minute=0.5, day=2.0))
    times: list[float] = []

    async def six() -> None:
        for _ in range(6):
            ticket = await limiter.acquire("m")
            times.append(time.monotonic())
            assert ticket is not None
            limiter.settle(ticket, None)

    aio.run(six())
    # Four go at once; the fifth waits for the first to leave the two-second "day".
    assert times[3] - times[0] < 0.5 and times[4] - times[0] >= 1.9
    assert max(sum(1 for u in times if 0 <= u - t < 2.0) for t in times) <= 4


def test_tokens_per_minute_count_what_calls_really_used(engine: Engine) -> None:
    """Calls are let through on their expected tokens and then charged what they used: after
    one call that used the whole budget, the next waits for the window."""
    limiter = CallLimiter(engine, Quota(tokens_per_minute=10_000, minute=1.0))

    async def two() -> list[float]:
        first = await limiter.acquire("m", 2_000)
        assert first is not None
        limiter.settle(first, 9_500)  # the answer reported more than expected
        start = time.monotonic()
        await limiter.acquire("m", 2_000)
        return [start, time.monotonic()]

    start, second = aio.run(two())
    assert second - start >= 0.8
    # A call expected to use more than the whole budget still goes, when it goes alone.
    huge = CallLimiter(engine, Quota(tokens_per_minute=1_000, minute=1.0))
    assert aio.run(huge.acquire("other", 50_000)) is not None


def test_a_call_counts_while_in_flight_and_from_its_return(engine: Engine) -> None:
    """The service counts a call on arrival, somewhere between its leaving and its answer: it
    holds the window while it is in flight, however long, and then from when it came back."""
    limiter = CallLimiter(engine, Quota(per_minute=1, minute=0.5))

    async def three() -> list[float]:
        first = await limiter.acquire("m")
        assert first is not None
        start = time.monotonic()
        waiting = asyncio.ensure_future(limiter.acquire("m"))
        await asyncio.sleep(1.0)  # in flight for two "minutes": nothing else goes
        assert not waiting.done()
        limiter.settle(first, 100)
        returned = time.monotonic()
        second = await waiting
        assert second is not None
        return [start, returned, time.monotonic()]

    _start, returned, second = aio.run(three())
    # The second call waited out a whole window from the first one's return.
    assert second - returned >= 0.45
