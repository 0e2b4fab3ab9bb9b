"""The records of a batch-mode job's batches (job_batch): written before each batch is
submitted, so that a restarted worker finds what it holds and where it stands."""

import json
import secrets
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.job_models import JobBatch, JobTask, JobTaskStatus
from app.jobs.lease import Lease
from app.models import utcnow

APPLIED = "APPLIED"  # a re-judge wave's verdicts are stored: never stored again
SUBMITTING = "SUBMITTING"  # recorded, not yet known to the API


def last_wave(engine: Engine, job_id: int) -> int:
    with Session(engine) as session:
        waves = session.scalars(select(col(JobBatch.wave)).where(col(JobBatch.job_id) == job_id)
                                .order_by(col(JobBatch.wave).desc()).limit(1)).all()
        return waves[0] if waves else 0


def records(engine: Engine, job_id: int, wave: int, step: str) -> list[JobBatch]:
    with Session(engine) as session:
        return list(session.scalars(select(JobBatch).where(
            col(JobBatch.job_id) == job_id, col(JobBatch.wave) == wave,
            col(JobBatch.step) == step).order_by(col(JobBatch.part))).all())


def record(engine: Engine, lease: Lease, wave: int, step: str, part: int, model: str,
           keys: list[str], carried: dict[str, str]) -> JobBatch:
    """The batch, recorded before it is submitted: a restart looks it up by this name, and
    finds what each of its requests carried."""
    display = f"medbanana-job{lease.job_id}-wave{wave}-{step}-{part}-{secrets.token_hex(4)}"
    with Session(engine) as session:
        lease.hold(session)
        record = JobBatch(job_id=lease.job_id, wave=wave, step=step, part=part, model=model,
                          display_name=display, state=SUBMITTING, keys=json.dumps(keys),
                          carried=json.dumps({k: carried[k] for k in keys}))
        session.add(record)
        session.commit()
        session.refresh(record)
        return record


def update_record(engine: Engine, lease: Lease, record: JobBatch) -> None:
    with Session(engine) as session:
        lease.hold(session)
        session.execute(update(JobBatch).where(col(JobBatch.id) == record.id).values(
            name=record.name, state=record.state, carried=record.carried, updated_at=utcnow()))
        session.commit()


def mark_applied(session: Session, *, job_id: int, wave: int) -> None:
    session.execute(update(JobBatch).where(
        col(JobBatch.job_id) == job_id, col(JobBatch.wave) == wave,
        col(JobBatch.step) == "judge").values(state=APPLIED, updated_at=utcnow()))


def open_tasks(engine: Engine, job_id: int) -> list[int]:
    with Session(engine) as session:
        return [i for i in session.scalars(select(col(JobTask.id)).where(
            col(JobTask.job_id) == job_id, col(JobTask.status) != JobTaskStatus.done)
            .order_by(col(JobTask.id))).all() if i is not None]


def job_task(engine: Engine, job_task_id: int) -> JobTask:
    with Session(engine) as session:
        job_task = session.get(JobTask, job_task_id)
        assert job_task is not None
        return job_task


@dataclass(frozen=True)
class BatchView:
    """A job's batch as its page shows it."""

    wave: int
    step: str
    name: str  # "batches/…", or the display name while it is being submitted
    calls: int
    state: str

    @property
    def label(self) -> str:
        return {APPLIED: "stored", SUBMITTING: "submitting"}.get(
            self.state, self.state.removeprefix("JOB_STATE_").lower())


def job_batches(session: Session, job_id: int) -> list[BatchView]:
    """A job's batches, newest wave first."""
    rows = session.scalars(select(JobBatch).where(col(JobBatch.job_id) == job_id)
                           .order_by(col(JobBatch.wave).desc(), col(JobBatch.id))).all()
    return [BatchView(r.wave, r.step, r.name or r.display_name, len(json.loads(r.keys)), r.state)
            for r in rows]
