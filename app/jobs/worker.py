"""The worker loop: claim and run jobs; when none is waiting, measure new edits.

Started with the web app (app/web/main.py) or on its own (`medbanana pipeline worker`), also on
another machine against a shared PostgreSQL.
"""

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.images.metrics_store import compute_pending
from app.job_models import WorkerHeartbeat
from app.jobs.registry import make_backend
from app.jobs.runner import STALE, check_stale_after, claim, run_job
from app.jobs.score_job import start_due_drift_checks
from app.models import Attempt, utcnow
from app.settings import Settings
from app.studies import roi_metrics
from pipeline.guarded_render import renderer

logger = logging.getLogger(__name__)
# A heartbeat this often; /readyz calls a worker gone after HEARTBEAT_STALE (app/health.py).
HEARTBEAT_EVERY = 15.0
# After a failed round of the loop it waits poll, 2 poll, 4 poll and so on up to this, so a
# database that is down is retried, not hammered, and never ends the loop.
MAX_BACKOFF = 60.0


def pipeline_output(settings: Settings) -> str:
    """Where regenerated images are written: the configured image store, else a data root
    of its own inside the var folder."""
    return settings.image_store or str(settings.var_dir / "pipeline")


def _newest_attempt(engine: Engine) -> int | None:
    with Session(engine) as session:
        return session.scalar(select(func.max(Attempt.id)))


def _beat(engine: Engine, worker_id: str, *, first: bool) -> None:
    with Session(engine) as session:
        if first:
            session.add(WorkerHeartbeat(worker_id=worker_id, host=socket.gethostname()[:255],
                                        pid=os.getpid()))
        else:
            session.execute(update(WorkerHeartbeat)
                            .where(WorkerHeartbeat.worker_id == worker_id)  # type: ignore[arg-type]
                            .values(beat_at=utcnow()))
        session.commit()


async def _heartbeat(engine: Engine, worker_id: str) -> None:
    """Beats while the loop lives, also during a long job; a failed beat is logged and the
    next one tried (the loop itself reports the database being down)."""
    first = True
    while True:
        try:
            await asyncio.to_thread(_beat, engine, worker_id, first=first)
            first = False
        except Exception:
            logger.warning("worker %s: heartbeat not written", worker_id, exc_info=True)
        await asyncio.sleep(HEARTBEAT_EVERY)


def warm_judge_renders() -> None:
    """Start the judge templates' render process (pipeline/guarded_render.py) now, so that
    neither the first candidate added nor the first prompt rendered waits for it."""
    renderer.warm()


async def work(engine: Engine, output: str | Path, *, once: bool = False, poll: float = 2.0,
               stop: asyncio.Event | None = None, stale_after: timedelta = STALE) -> None:
    """Claim and run jobs until stopped (or, with ``once``, until none is waiting).

    Any error in a round of the loop is logged with its traceback and the loop goes on after
    a back-off; only ``stop`` (or cancellation) ends it.
    """
    check_stale_after(stale_after)  # wrong settings stop the worker here, not every round
    worker_id = f"{socket.gethostname()[:40]}-{os.getpid()}-{secrets.token_hex(4)}"
    logger.info("pipeline worker %s started", worker_id)
    warm_judge_renders()
    beating = asyncio.create_task(_heartbeat(engine, worker_id))
    state = _LoopState()
    failures = 0
    try:
        while stop is None or not stop.is_set():
            try:
                outcome = await _one_round(engine, output, state, stale_after=stale_after)
            except Exception:
                if once:  # a one-shot run (tests, `pipeline run`) fails where it can be seen
                    raise
                failures += 1
                wait = min(poll * 2 ** (failures - 1), MAX_BACKOFF)
                logger.exception("pipeline worker %s: a round failed (%d in a row); retrying "
                                 "in %.0f s", worker_id, failures, wait)
                await _sleep(wait, stop)
                continue
            failures = 0
            if outcome == "busy":
                continue
            if once:
                return
            await _sleep(poll, stop)
    finally:
        beating.cancel()
        logger.info("pipeline worker %s stopped", worker_id)


async def _sleep(seconds: float, stop: asyncio.Event | None) -> None:
    """Sleep, but wake at once when asked to stop."""
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


class _LoopState:
    # The newest attempt when nothing was left to measure: the search for unmeasured edits
    # scans every attempt, so it is skipped until a new one appears.
    measured_up_to: int | None = None


async def _one_round(engine: Engine, output: str | Path, state: _LoopState, *,
                     stale_after: timedelta) -> str:
    """Run one job or measure one batch ("busy"), or find nothing to do ("idle")."""
    # Scheduled drift checks become queued jobs, claimed below like any other. Settings are
    # read at this call, as make_backend reads them: a key set later is used.
    await asyncio.to_thread(start_due_drift_checks, engine, Settings())
    lease = await asyncio.to_thread(claim, engine, stale_after=stale_after)
    if lease is not None:
        logger.info("job %s claimed (lease %s)", lease.job_id, lease.token)
        status = await run_job(engine, lease, make_backend, output)
        logger.info("job %s ended here: %s", lease.job_id, status)
        return "busy"
    newest = await asyncio.to_thread(_newest_attempt, engine)
    if newest != state.measured_up_to:
        if await asyncio.to_thread(compute_pending, engine):
            return "busy"
        state.measured_up_to = newest
    # Readers' regions: few, and the query is on the small answer table.
    if await asyncio.to_thread(roi_metrics.compute_pending, engine):
        return "busy"
    return "idle"
