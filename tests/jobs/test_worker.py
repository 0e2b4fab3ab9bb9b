"""The worker loop never dies silently: a failing round is logged with its traceback, the loop
backs off and carries on, and its heartbeat shows it alive."""

import asyncio
import logging
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.job_models import WorkerHeartbeat
from app.jobs import worker
from tests import aio


def test_a_failing_round_is_logged_and_the_loop_carries_on(engine: Engine, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    rounds = {"n": 0}
    real = worker.roi_metrics.compute_pending

    def flaky(engine: Engine) -> int:
        rounds["n"] += 1
        if rounds["n"] <= 2:
            raise RuntimeError("disk full while measuring")
        return real(engine)

    # Readers' regions are looked for in every idle round, so the failure recurs each round.
    monkeypatch.setattr(worker.roi_metrics, "compute_pending", flaky)

    async def run() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(worker.work(engine, tmp_path, poll=0.01, stop=stop))
        async with asyncio.timeout(10):
            while rounds["n"] < 4:
                await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, timeout=10)

    with caplog.at_level(logging.INFO, logger="app.jobs.worker"):
        aio.run(run())
    failures = [r for r in caplog.records if "a round failed" in r.getMessage()]
    assert len(failures) == 2
    # The traceback: as exc_info, or as text once the redaction filter has formatted it.
    first = failures[0]
    traceback = first.exc_text or (logging.Formatter().formatException(first.exc_info)
                                   if first.exc_info else "")
    assert "Traceback" in traceback and "disk full" in traceback
    assert "(2 in a row)" in failures[1].getMessage()
    assert any("stopped" in r.getMessage() for r in caplog.records)
    with Session(engine) as session:
        beat = session.exec(select(WorkerHeartbeat)).one()
    assert beat.pid > 0 and beat.host


def test_a_one_shot_run_fails_where_it_can_be_seen(engine: Engine, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(engine: Engine) -> int:
        raise RuntimeError("broken")

    monkeypatch.setattr(worker.roi_metrics, "compute_pending", broken)
    with pytest.raises(RuntimeError, match="broken"):
        aio.run(worker.work(engine, tmp_path, once=True))
