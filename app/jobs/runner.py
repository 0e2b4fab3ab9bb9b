"""Jobs: rows in the database that any worker can run, resume, or be told to cancel.

A worker claims a queued job, or a running job whose heartbeat is stale (its worker died),
and works through its tasks with bounded concurrency. Each task's run id is recorded as
soon as the run starts, so a resumed job continues that run at its next round: finished
rounds are never repeated and no attempt is stored twice.
"""

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col

from app.db import end_if_stalled
from app.images.store import normalised
from app.job_models import Job, JobStatus, JobTask, JobTaskStatus
from app.jobs import store
from app.jobs.batch_job import BatchRun
from app.jobs.batch_score import BatchScore
from app.jobs.dicom_send import send_case
from app.jobs.feedback import reader_feedback
from app.jobs.lease import Displaced, Lease
from app.jobs.options import JobOptions
from app.jobs.rate_limit import CallLimiter
from app.jobs.rejudge import rejudge_task
from app.judges.promotion import promoted_backend
from app.judges.scoring import gemini_judge, offline_judge, score_task
from app.models import Run, utcnow
from app.settings import Settings
from pipeline.backend import Backend
from pipeline.gemini import GeminiBackend
from pipeline.loop import CancelledWhileWaiting, Options, RetryPolicy, regenerate
from pipeline.redaction import redact
from pipeline.vocabulary import Outcome

DISPLACED = "displaced"  # what run_job returns when another worker took the job over
HEARTBEAT = timedelta(seconds=5)
STALE = timedelta(seconds=30)  # a running job unheard of this long has lost its worker
# Shorter, and a healthy job whose heartbeat is merely late would be taken from its worker.
MIN_STALE = HEARTBEAT * 3
ERRORS_KEPT = 20
logger = logging.getLogger(__name__)


def check_stale_after(stale_after: timedelta) -> None:
    if stale_after < MIN_STALE:
        raise ValueError(f"stale-after must be at least {MIN_STALE.total_seconds():.0f} s "
                         f"(three heartbeats of {HEARTBEAT.total_seconds():.0f} s), not "
                         f"{stale_after.total_seconds():g} s")


def claim(engine: Engine, job_id: int | None = None, *,
          stale_after: timedelta = STALE) -> Lease | None:
    """Take a queued job (or a running one whose worker went silent), with a new lease that
    displaces any earlier holder; None if there is none."""
    check_stale_after(stale_after)
    stale = utcnow() - stale_after
    with Session(engine) as session:
        query = select(col(Job.id)).where(or_(
            col(Job.status) == JobStatus.queued,
            (col(Job.status) == JobStatus.running) & (col(Job.heartbeat_at) < stale)))
        if job_id is not None:
            query = query.where(col(Job.id) == job_id)
        candidate = session.scalars(query.order_by(col(Job.id)).limit(1)).first()
        if candidate is None:
            return None
        # The row may be locked by a worker that stalled inside a write: skip it for now
        # rather than wait (the lock ends with that worker's session).
        end_if_stalled(session, lock_wait="2s")
        # Compare-and-set on the heartbeat, so two workers never take the same job.
        try:
            claimed = session.execute(
                update(Job).where(col(Job.id) == candidate, or_(
                    col(Job.status) == JobStatus.queued, col(Job.heartbeat_at) < stale))
                .values(status=JobStatus.running.value, heartbeat_at=utcnow(),
                        lease=Job.lease + 1, started_at=func.coalesce(Job.started_at, utcnow())))
        except OperationalError:  # the lock was not had in time: another round will try
            session.rollback()
            return None
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return None
        # Read in the claim's own transaction, so it is the lease this claim set.
        token = session.scalar(select(col(Job.lease)).where(col(Job.id) == candidate))
        session.commit()
        return Lease(candidate, int(token or 0))


async def run_job(engine: Engine, lease: Lease, make_backend: Callable[[JobOptions], Backend],
                  output: str | Path, *, policy: RetryPolicy = RetryPolicy(),
                  on_progress: Callable[[Job], None] | None = None,
                  quota_windows: tuple[float, float] = (60.0, 86_400.0)) -> str:
    """Work the claimed job to its end (or its cancellation); returns its final status, or
    DISPLACED when another worker took it over meanwhile (this one then wrote nothing more)."""
    job_id = lease.job_id
    root_id = store.output_root(engine, output)
    root = normalised(output)
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        options = JobOptions.from_json(job.options)
        pending = session.scalars(select(JobTask).where(
            col(JobTask.job_id) == job_id, col(JobTask.status) != JobTaskStatus.done)
            .order_by(col(JobTask.id))).all()
    backend = make_backend(options)
    if options.judge_candidate_id is not None:  # set on regeneration and re-judging jobs only
        backend = promoted_backend(engine, backend, options.judge_candidate_id)
    policy = replace(policy, quota_cap_seconds=options.max_quota_wait)
    # Calls, not task starts, per model and across every job and worker on this database.
    # (The quota's minute and day are shortened only by tests.)
    minute, day = quota_windows
    cancel, displaced = threading.Event(), threading.Event()
    limiter = CallLimiter(engine, replace(options.quota(), minute=minute, day=day), job_id,
                          record=options.backend == "gemini", lease=lease,
                          cancelled=cancel.is_set)
    gate = asyncio.Semaphore(max(1, options.concurrency))
    loop_options = Options(rounds=options.rounds, policy=policy, quota=limiter)
    rounds = store.RunRounds(engine, root_id, root, lease, options.judge_candidate_id)

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT.total_seconds())
            try:
                if await asyncio.to_thread(_heartbeat, engine, lease):
                    cancel.set()
            except Displaced as error:
                logger.warning("%s; stopping its tasks here", error)
                displaced.set()
                cancel.set()
                return
            except Exception:
                # A dropped connection: the next beat gets a fresh one. Were beats to stop
                # silently, the job would be taken from a worker that is still running it.
                logger.warning("job %s: heartbeat not written", job_id, exc_info=True)

    async def one(job_task: JobTask) -> None:
        async with gate:
            if cancel.is_set() or await asyncio.to_thread(_cancel_requested, engine, job_id):
                cancel.set()
                return
            try:
                await task_of_job(job_task)
            except CancelledWhileWaiting:
                pass  # cancelled while a call waited for quota: the task stays open
            except Displaced as error:
                if not displaced.is_set():
                    logger.warning("%s; stopping its tasks here", error)
                displaced.set()
                cancel.set()

    async def task_of_job(job_task: JobTask) -> None:
        if options.kind == "dicom":
            problem = await asyncio.to_thread(send_case, engine, options, job_task.task_id,
                                              Settings(), job_id)
            await asyncio.to_thread(_finish_task, engine, lease, job_task.id or 0,
                                    None if problem else Outcome.success, problem)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_job, engine, job_id))
            return
        if options.kind == "score":
            judge = (gemini_judge(backend, policy, limiter, cancelled=cancel.is_set)
                     if isinstance(backend, GeminiBackend) else offline_judge)
            problem = await score_task(engine, options.candidate_id or 0, options.reference,
                                       job_task.task_id, judge, hold=lease.hold,
                                       cancelled=cancel.is_set)
            if cancel.is_set():
                return  # the task stays open: a cancelled job's unit is not done
            await asyncio.to_thread(_finish_task, engine, lease, job_task.id or 0,
                                    None if problem else Outcome.success, problem)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_job, engine, job_id))
            return
        if options.kind == "rejudge":
            outcome_or_error = await rejudge_task(engine, backend, job_task.task_id,
                                                  options.rejudge_times, policy, limiter, lease,
                                                  options.judge_candidate_id)
            failed = isinstance(outcome_or_error, str)
            await asyncio.to_thread(_finish_task, engine, lease, job_task.id or 0,
                                    None if failed else Outcome.success,
                                    outcome_or_error if failed else None)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_job, engine, job_id))
            return
        try:
            feedback = (await asyncio.to_thread(reader_feedback, engine, job_task.task_id)
                        if options.use_reader_feedback else [])
            run_id = job_task.run_id or await asyncio.to_thread(
                store.start_run, engine, job_task.task_id, job_task.id, lease)
            _, outcome = await regenerate(
                rounds, backend, job_task.task_id, loop_options, run_id=run_id,
                feedback=feedback, cancelled=cancel.is_set)
        except LookupError as error:  # e.g. the original image is gone
            await asyncio.to_thread(_finish_task, engine, lease, job_task.id or 0, None,
                                    str(error))
            return
        if outcome is not None:
            await asyncio.to_thread(_finish_task, engine, lease, job_task.id or 0, outcome, None)
        if on_progress is not None:
            on_progress(await asyncio.to_thread(_job, engine, job_id))

    async def in_batches() -> None:
        if not isinstance(backend, GeminiBackend):
            raise ValueError(f"--mode batch needs the gemini backend, not {backend.name!r}")

        async def finish(job_task_id: int, outcome: Outcome | None, error: str | None) -> None:
            await asyncio.to_thread(_finish_task, engine, lease, job_task_id, outcome, error)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_job, engine, job_id))

        run = BatchRun(engine, lease, backend, policy, limiter, cancel, finish,
                       poll_seconds=options.batch_poll_seconds, root_id=root_id, root=root,
                       rounds=options.rounds, rejudge_times=options.rejudge_times,
                       use_reader_feedback=options.use_reader_feedback)
        try:
            if options.kind == "score":
                await BatchScore(engine, lease, backend, policy, limiter, cancel, finish,
                                 poll_seconds=options.batch_poll_seconds,
                                 candidate_id=options.candidate_id or 0,
                                 ref=options.reference).score()
            else:
                await (run.rejudge() if options.kind == "rejudge" else run.regenerate())
        except CancelledWhileWaiting:
            pass  # the job was cancelled while its batches ran; closed below
        except Displaced as error:
            logger.warning("%s; stopping its batches here", error)
            displaced.set()

    beater = asyncio.create_task(beat())
    try:
        if options.mode == "batch":
            await in_batches()
        else:
            await _all(one(t) for t in pending)
    except Exception:
        # Every task of the job is stopped by now (_all): nothing more is written under this
        # lease, and another worker may take the job at once rather than after it goes stale.
        await asyncio.to_thread(_give_up, engine, lease)
        raise
    finally:
        beater.cancel()
    if displaced.is_set():
        return DISPLACED
    try:
        return await asyncio.to_thread(_close, engine, lease)
    except Displaced:
        return DISPLACED


async def _all(tasks: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run the job's tasks together. The first one to fail cancels every other, and all of
    them have stopped before its error is raised: a task left running would go on calling
    Gemini and writing under a lease its job no longer stands behind."""
    try:
        async with asyncio.TaskGroup() as group:
            for task in tasks:
                group.create_task(task)
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None


def _give_up(engine: Engine, lease: Lease) -> None:
    """Hand the job back after an error: a new lease (so that no late write of this worker
    lands) and a heartbeat long past, so that the next worker free claims it. Tried on a
    fresh connection, and again once, since the error is often a dropped connection."""
    for attempt in (1, 2):
        try:
            with Session(engine) as session:
                session.execute(update(Job).where(
                    col(Job.id) == lease.job_id, col(Job.lease) == lease.token,
                    col(Job.status) == JobStatus.running).values(
                    lease=Job.lease + 1, heartbeat_at=utcnow() - timedelta(days=1)))
                session.commit()
            logger.warning("job %s given up after an error; another worker takes it over",
                           lease.job_id)
            return
        except Exception:
            logger.warning("job %s: could not be given up (try %d of 2)", lease.job_id, attempt,
                           exc_info=True)


def _job(engine: Engine, job_id: int) -> Job:
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def _heartbeat(engine: Engine, lease: Lease) -> bool:
    """Refresh the heartbeat; True when a cancel was requested. Raises Displaced when the
    job has another holder."""
    with Session(engine) as session:
        lease.hold(session)
        session.commit()
        return _cancel_requested(engine, lease.job_id)


def _cancel_requested(engine: Engine, job_id: int) -> bool:
    with Session(engine) as session:
        return bool(session.scalar(select(col(Job.cancel_requested)).where(col(Job.id) == job_id)))


def _finish_task(engine: Engine, lease: Lease, job_task_id: int, outcome: Outcome | None,
                 error: str | None) -> None:
    """Mark the task done and count it, atomically: concurrent tasks finish at the same
    moment, and a resumed job must never count a task twice."""
    counters = {Outcome.success: "succeeded", Outcome.failed: "failed", Outcome.blocked: "blocked",
                Outcome.unjudged: "unjudged"}
    column = counters.get(outcome, "api_failed") if outcome is not None else "api_failed"
    job_id = lease.job_id
    with Session(engine) as session:
        lease.hold(session)
        marked = session.execute(update(JobTask).where(
            col(JobTask.id) == job_task_id, col(JobTask.status) != JobTaskStatus.done)
            .values(status=JobTaskStatus.done.value))
        if marked.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return
        # The UPDATE holds the job row's lock until commit, so the error list below is
        # read and written by one task at a time (SQLite: the database write lock).
        session.execute(update(Job).where(col(Job.id) == job_id).values(
            done=Job.done + 1, heartbeat_at=utcnow(),
            **{column: getattr(Job, column) + 1}))
        if column in ("api_failed", "blocked"):
            job_task = session.get(JobTask, job_task_id)
            assert job_task is not None
            errors = json.loads(session.scalar(select(col(Job.last_errors)).where(
                col(Job.id) == job_id)) or "[]")
            errors.append({"task_id": job_task.task_id,
                           "error": redact(error or _run_error(session, job_task))})
            session.execute(update(Job).where(col(Job.id) == job_id).values(
                last_errors=json.dumps(errors[-ERRORS_KEPT:])))
        session.commit()


def _run_error(session: Session, job_task: JobTask) -> str:
    run = session.get(Run, job_task.run_id) if job_task.run_id else None
    return f"{run.failure_step}: {run.failure_error}" if run else "unknown error"


def _close(engine: Engine, lease: Lease) -> str:
    job_id = lease.job_id
    with Session(engine) as session:
        lease.hold(session)
        job = session.get(Job, job_id)
        assert job is not None
        open_tasks = session.scalar(select(func.count()).select_from(JobTask).where(
            col(JobTask.job_id) == job_id, col(JobTask.status) != JobTaskStatus.done)) or 0
        if job.cancel_requested:
            job.status = JobStatus.cancelled.value
            # Runs stopped between rounds keep their rounds but never become a task's latest.
            session.execute(update(Run).where(
                col(Run.id).in_(select(col(JobTask.run_id)).where(
                    col(JobTask.job_id) == job_id, col(JobTask.status) != JobTaskStatus.done)),
                col(Run.outcome) == Outcome.running).values(outcome=Outcome.cancelled.value))
        elif open_tasks == 0:
            job.status = JobStatus.done.value
        else:
            return job.status  # left running for a resume
        job.finished_at = utcnow()
        session.add(job)
        session.commit()
        return job.status
