"""Making a job and asking it to stop: a job is its options and its tasks, written in one
transaction, and refused while a queued or running job does any of the same work
(app/jobs/runner.py works it)."""

import hashlib
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.audit import append
from app.db import serialised
from app.errors import Conflict, NotFound
from app.job_models import Job, JobStatus, JobTask
from app.jobs.options import JobOptions
from app.judges.promotion import checked_for_job
from app.models import utcnow

# Job creation checks for an identical job and writes its own as one step (app/db.py).
JOB_CREATION_LOCK = 0x6A6F62


# What changes how a job runs, never what it makes or pays for: a job that differs from a
# queued or running one only in these pays again for the same tasks.
HOW_IT_RUNS = frozenset({"concurrency", "requests_per_minute", "requests_per_day",
                         "tokens_per_minute", "timeout_seconds", "mode", "max_quota_wait",
                         "batch_poll_seconds"})


def create_job(engine: Engine, task_ids: list[int], options: JobOptions,
               created_by: int | None = None) -> int:
    """The new job's id. A regeneration or re-judging job records the judge promoted now
    (Invalid, with nothing made, when it cannot run that judge)."""
    with Session(engine) as session:
        job_id = add_job(session, task_ids, options, created_by)
        session.commit()
        return job_id


def add_job(session: Session, task_ids: list[int], options: JobOptions,
            created_by: int | None = None) -> int:
    """The new job written in the caller's transaction, which holds the job-creation lock
    until it commits; Conflict, naming the job, when a queued or running job would do any
    of the same work (app/jobs/queue.py HOW_IT_RUNS)."""
    ids = list(dict.fromkeys(task_ids))
    if options.kind in ("regenerate", "rejudge"):
        options = replace(options, judge_candidate_id=checked_for_job(
            session, options.backend, options.mode))
    serialised(session, JOB_CREATION_LOCK)
    overlap = overlapping_job(session, ids, options)
    if overlap is not None:
        # 25 clicks on "regenerate" made 25 jobs for the same tasks, each paying again; so
        # did a second click on a wider selection, or with another concurrency.
        same, shared = overlap
        tasks = "task" if len(ids) == 1 else "tasks"
        which = (f"the same {len(ids)} {tasks}" if shared == len(ids)
                 else f"{shared:,} of these {len(ids):,} {tasks}")
        raise Conflict(f"job {same.id} is already {same.status} on {which}, doing the same work: "
                       f"follow it at /jobs/{same.id}, or cancel it first, or leave those "
                       "tasks out")
    job = Job(kind=options.kind, options=options.as_json(), total=len(ids),
              created_by=created_by)
    session.add(job)
    session.flush()
    session.add_all([JobTask(job_id=job.id or 0, task_id=t) for t in ids])
    # Last, before the caller's commit: the log's lock is held for as short a time as can be.
    append(session, f"{options.kind} job queued", actor=f"user {created_by}" if created_by else "shell",
           subject=f"job {job.id}", body={
               "tasks": len(ids), "task_ids_sha256": hashlib.sha256(
                   ",".join(map(str, ids)).encode()).hexdigest(),
               "backend": options.backend, "judge_candidate": options.judge_candidate_id})
    return job.id or 0


def _work(options: JobOptions) -> dict[str, object]:
    return {k: v for k, v in options.__dict__.items() if k not in HOW_IT_RUNS}


def overlapping_job(session: Session, task_ids: list[int],
                    options: JobOptions) -> tuple[Job, int] | None:
    """A queued or running job doing the same work on any of these tasks, with how many of
    them it has, if there is one."""
    wanted, chosen = _work(options), set(task_ids)
    for job in session.scalars(select(Job).where(
            col(Job.kind) == options.kind,
            col(Job.status).in_((JobStatus.queued, JobStatus.running))).order_by(col(Job.id))):
        if _work(JobOptions.from_json(job.options)) != wanted:
            continue
        theirs = set(session.scalars(select(col(JobTask.task_id)).where(
            col(JobTask.job_id) == job.id)))
        shared = len(theirs & chosen)
        if shared:
            return job, shared
    return None


def request_cancel(engine: Engine, job_id: int) -> None:
    with Session(engine) as session:
        job = session.get(Job, job_id)
        if job is None:
            raise NotFound(f"no job {job_id}")
        if job.status in (JobStatus.queued, JobStatus.running):
            job.cancel_requested = True
            if job.status == JobStatus.queued:
                job.status, job.finished_at = JobStatus.cancelled.value, utcnow()
            session.add(job)
            session.commit()
