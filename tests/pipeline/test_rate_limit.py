"""The call limiter: per model, shared through the database by every limiter (every job and
worker), and no sliding window ever holds more calls than allowed."""

import asyncio
import time

import pytest
from sqlalchemy.engine import Engine

from pipeline.rate_limit import CallLimiter
from tests import aio

WINDOW, ALLOWED = 1.0, 3


def busiest_window(times: list[float]) -> int:
    return max(sum(1 for u in times if 0 <= u - t < WINDOW) for t in times)


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_workers_share_each_models_limit(request: pytest.FixtureRequest, database: str) -> None:
    engine: Engine = request.getfixturevalue("engine" if database == "sqlite" else "pg_engine")
    workers = [CallLimiter(engine, ALLOWED, window=WINDOW) for _ in range(2)]
    let_through: dict[str, list[float]] = {"text-model": [], "image-model": []}

    async def call(limiter: CallLimiter, model: str) -> None:
        await limiter.acquire(model)
        let_through[model].append(time.monotonic())

    async def everyone() -> None:
        await asyncio.gather(*(call(workers[i % 2], model) for i in range(9)
                               for model in let_through))

    start = time.monotonic()
    aio.run(everyone())
    for model, times in let_through.items():
        assert len(times) == 9, model
        assert busiest_window(times) <= ALLOWED, model
    # 9 calls at 3 a second take at least two full windows; both models went in parallel.
    assert 2.0 <= time.monotonic() - start < 8.0


def test_no_limit_lets_everything_through_at_once(engine: Engine) -> None:
    limiter = CallLimiter(engine, None)
    start = time.monotonic()
    async def fifty() -> None:
        await asyncio.gather(*(limiter.acquire("m") for _ in range(50)))

    aio.run(fifty())
    assert time.monotonic() - start < 1.0
