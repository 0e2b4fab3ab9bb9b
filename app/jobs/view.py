"""A job as its pages and the CLI show it: counts, rate, time left, quota waits, runs."""

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import NotFound
from app.job_models import Job, JobStatus, JobTask
from app.models import Run, Task, as_utc, utcnow
from pipeline.redaction import redact
from pipeline.vocabulary import Outcome


@dataclass(frozen=True)
class JobRun:
    """A run a job started, with how it ended (a finished task's status is "done" whether
    its run succeeded or not)."""

    task_id: int
    run_id: int
    task_key: str
    outcome: str
    success_round: int | None
    failure_step: str | None

    @property
    def said(self) -> str:
        if self.outcome == Outcome.success:
            return f"accepted in round {self.success_round}" if self.success_round else "accepted"
        if self.outcome == Outcome.failed:
            return "rejected in every round"
        if self.outcome == Outcome.running:
            return "running"
        step = f" at {self.failure_step}" if self.failure_step else ""
        return {Outcome.unjudged: "no verdict to act on", Outcome.api_failed: f"API failed{step}",
                Outcome.blocked: f"blocked by the API{step}",
                Outcome.cancelled: "cancelled"}.get(Outcome(self.outcome), self.outcome)

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.success


def job_runs(session: Session, job_id: int, limit: int = 50) -> list[JobRun]:
    """The newest runs a job started, each with its outcome."""
    return [JobRun(*row) for row in session.execute(
        select(col(JobTask.task_id), col(JobTask.run_id), col(Task.task_key), col(Run.outcome),
               col(Run.success_round), col(Run.failure_step))
        .join(Task, col(Task.id) == JobTask.task_id)
        .join(Run, col(Run.id) == JobTask.run_id)
        .where(col(JobTask.job_id) == job_id, col(JobTask.run_id).is_not(None))
        .order_by(col(JobTask.id).desc()).limit(limit)).all()]


def get_job(session: Session, job_id: int) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise NotFound(f"no job {job_id}")
    return job


def recent_jobs(session: Session, limit: int = 200) -> list[dict[str, Any]]:
    """The newest jobs, as the jobs page lists them."""
    jobs = session.scalars(select(Job).order_by(col(Job.id).desc()).limit(limit)).all()
    return [job_summary(j) for j in jobs]


def job_summary(job: Job) -> dict[str, Any]:
    waiting = as_utc(job.waiting_until) if job.waiting_until is not None else None
    if waiting is not None and (waiting <= utcnow() or job.status != JobStatus.running):
        waiting = None
    elapsed = ((job.finished_at or utcnow()) - job.started_at).total_seconds() if job.started_at else 0
    rate = job.done / elapsed * 60 if elapsed > 0 else None
    remaining = (job.total - job.done) / (job.done / elapsed) if job.done and elapsed > 0 else None
    return {"id": job.id, "status": job.status, "total": job.total, "done": job.done,
            "succeeded": job.succeeded, "failed": job.failed, "api_failed": job.api_failed,
            "blocked": job.blocked, "unjudged": job.unjudged,
            "waiting_until": waiting,
            "waiting_label": waiting and (waiting.strftime("%H:%M UTC") if waiting.date() == utcnow().date()
                                          else waiting.strftime("%H:%M UTC on %d %b")),
            "per_minute": round(rate, 1) if rate else None,
            "eta_seconds": round(remaining) if remaining is not None else None,
            "errors": [{**e, "error": redact(str(e.get("error", "")))} for e in json.loads(job.last_errors)],
            "options": json.loads(job.options)}
