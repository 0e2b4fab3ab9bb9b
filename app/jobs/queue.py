"""Making a job and asking it to stop: a job is its options and its tasks, written in one
transaction, and refused while an identical one is queued or running (app/jobs/runner.py
works it)."""

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import serialised
from app.errors import Conflict, NotFound
from app.job_models import Job, JobStatus, JobTask
from app.jobs.options import JobOptions
from app.judges.promotion import checked_for_job
from app.models import utcnow

# Job creation checks for an identical job and writes its own as one step (app/db.py).
JOB_CREATION_LOCK = 0x6A6F62


def create_job(engine: Engine, task_ids: list[int], options: JobOptions,
               created_by: int | None = None) -> int:
    """The new job's id. A regeneration or re-judging job records the judge promoted now
    (Invalid, with nothing made, when it cannot run that judge)."""
    ids = list(dict.fromkeys(task_ids))
    with Session(engine) as session:
        if options.kind in ("regenerate", "rejudge"):
            options = replace(options, judge_candidate_id=checked_for_job(
                session, options.backend, options.mode))
        serialised(session, JOB_CREATION_LOCK)
        same = identical_job(session, ids, options)
        if same is not None:
            # 25 clicks on "regenerate" made 25 jobs for the same tasks, each paying again.
            raise Conflict(f"job {same.id} is already {same.status} with the same options on "
                           f"the same {len(ids)} {'task' if len(ids) == 1 else 'tasks'}: "
                           f"follow it at /jobs/{same.id}, or cancel it first")
        job = Job(kind=options.kind, options=options.as_json(), total=len(ids),
                  created_by=created_by)
        session.add(job)
        session.flush()
        session.add_all([JobTask(job_id=job.id or 0, task_id=t) for t in ids])
        session.commit()
        return job.id or 0


def identical_job(session: Session, task_ids: list[int], options: JobOptions) -> Job | None:
    """A queued or running job with these options on exactly these tasks, if there is one."""
    wanted = options.as_json()
    for job in session.scalars(select(Job).where(
            col(Job.kind) == options.kind, col(Job.options) == wanted,
            col(Job.status).in_((JobStatus.queued, JobStatus.running)),
            col(Job.total) == len(task_ids))):
        theirs = set(session.scalars(select(col(JobTask.task_id)).where(
            col(JobTask.job_id) == job.id)))
        if theirs == set(task_ids):
            return job
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
