"""The worker loop: claim and run jobs; when none is waiting, measure new edits.

Started with the web app (app/main.py) or on its own (`medbanana pipeline worker`), also on
another machine against a shared PostgreSQL.
"""

import asyncio
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import roi_metrics
from app.metrics_store import compute_pending
from app.models import Attempt
from app.settings import Settings
from pipeline.jobs import STALE, claim, run_job
from pipeline.registry import make_backend


def pipeline_output(settings: Settings) -> Path:
    """Where regenerated images are written: inside the var folder, a data root of its own."""
    return settings.var_dir / "pipeline"


def _newest_attempt(engine: Engine) -> int | None:
    with Session(engine) as session:
        return session.scalar(select(func.max(Attempt.id)))


async def work(engine: Engine, output: Path, *, once: bool = False, poll: float = 2.0,
               stop: asyncio.Event | None = None, stale_after: timedelta = STALE) -> None:
    """Claim and run jobs until stopped (or, with ``once``, until none is waiting)."""
    measured_up_to: int | None = None  # newest attempt when nothing was left to measure
    while stop is None or not stop.is_set():
        job_id = await asyncio.to_thread(claim, engine, stale_after=stale_after)
        if job_id is not None:
            await run_job(engine, job_id, make_backend, output)
            continue
        # Nothing to run: measure the edits that have no metrics yet, a batch at a time.
        # The search for them scans every attempt, so it is skipped until a new one appears.
        newest = await asyncio.to_thread(_newest_attempt, engine)
        if newest != measured_up_to:
            if await asyncio.to_thread(compute_pending, engine):
                continue
            measured_up_to = newest
        # Readers' regions: few, and the query is on the small answer table.
        if await asyncio.to_thread(roi_metrics.compute_pending, engine):
            continue
        if once:
            return
        await asyncio.sleep(poll)
