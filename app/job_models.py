"""The pipeline's bookkeeping tables: jobs, their tasks and batches, the quota windows
shared by every worker, and the workers' heartbeats (the domain model is app/models.py)."""

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, Column, Index, String, Text, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from app.models import utcnow


class WorkerHeartbeat(SQLModel, table=True):
    """A pipeline worker's last sign of life; /readyz wants a recent one."""

    __tablename__ = "worker_heartbeat"
    worker_id: str = Field(sa_column=Column(String(64), primary_key=True))
    host: str = Field(sa_column=Column(String(255), nullable=False))
    pid: int
    started_at: datetime = Field(default_factory=utcnow)
    beat_at: datetime = Field(default_factory=utcnow, index=True)


class RateLimit(SQLModel, table=True):
    """One row per model whose calls are limited: the lock every worker takes, in turn,
    to count the model's recent calls and add its own (app/jobs/rate_limit.py)."""

    __tablename__ = "rate_limit"
    model: str = Field(sa_column=Column(String(100), primary_key=True))


class RateCall(SQLModel, table=True):
    """A call to a model: the limiter's sliding window. ``at`` is when it was let through
    while it is in flight, then when its answer came back: the service counted it on arrival,
    somewhere in between, so a window that counts it from its return never forgets it early."""

    __tablename__ = "rate_call"
    __table_args__ = (Index("ix_rate_call_model_at", "model", "at"),)
    id: int | None = Field(default=None, primary_key=True)
    model: str = Field(sa_column=Column(String(100), nullable=False))
    at: datetime = Field(default_factory=utcnow)
    in_flight: bool = Field(default=False, sa_column=Column(Boolean, nullable=False,
                                                            server_default=false()))
    # Input and output tokens the call used, filled in when it answers (tokens per minute).
    tokens: int = 0


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    cancelled = "cancelled"


class JobTaskStatus(StrEnum):
    pending = "pending"
    running = "running"  # its run has started (``run_id`` is set); a resume continues it
    done = "done"


class Job(SQLModel, table=True):
    """A pipeline job: which tasks, with what options, and how far it got. Workers claim
    queued jobs and resume running ones, so a job outlives the process that started it."""

    __tablename__ = "job"
    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(default="regenerate", sa_column=Column(String(16), nullable=False))
    status: str = Field(default=JobStatus.queued.value, sa_column=Column(String(16), nullable=False))
    # Options as JSON: backend, rounds, concurrency, models, use_reader_feedback, filter.
    options: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    total: int = 0
    done: int = 0
    succeeded: int = 0
    failed: int = 0
    api_failed: int = 0
    blocked: int = 0
    unjudged: int = 0  # runs that ended with no verdict on any round
    cancel_requested: bool = False
    last_errors: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    created_by: int | None = Field(default=None, foreign_key="app_user.id")
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    # The fencing token: raised by every claim; a worker writes for the job only while the
    # lease is still the one it claimed with (app/jobs/lease.py).
    lease: int = 0
    # Set while every call of the job waits for a used-up quota: the job page says until when.
    waiting_until: datetime | None = None


class JobTask(SQLModel, table=True):
    """One task of a job; ``run_id`` is set when its run starts, so a resumed job continues
    that run from its next round instead of starting over."""

    __tablename__ = "job_task"
    __table_args__ = (UniqueConstraint("job_id", "task_id"),)
    id: int | None = Field(default=None, primary_key=True)
    job_id: int = Field(foreign_key="job.id", index=True)
    task_id: int = Field(foreign_key="task.id")
    status: str = Field(default=JobTaskStatus.pending.value,
                        sa_column=Column(String(16), nullable=False))
    run_id: int | None = Field(default=None, foreign_key="run.id")


class JobBatch(SQLModel, table=True):
    """A batch a batch-mode job submitted to the Batch API: which wave (every open task's
    next round, or one re-judge pass) and step it holds, its name at Gemini and its state.
    Recorded before it is submitted, so a restart finds it instead of submitting again."""

    __tablename__ = "job_batch"
    __table_args__ = (UniqueConstraint("job_id", "wave", "step", "part"),)
    id: int | None = Field(default=None, primary_key=True)
    job_id: int = Field(foreign_key="job.id", index=True)
    wave: int
    step: str = Field(sa_column=Column(String(16), nullable=False))
    part: int = 0  # a step's calls over the inline size limit go in several batches
    model: str = Field(sa_column=Column(String(100), nullable=False))
    display_name: str = Field(sa_column=Column(String(128), nullable=False, unique=True))
    name: str | None = Field(default=None, sa_column=Column(String(200)))  # "batches/…"
    state: str = Field(sa_column=Column(String(40), nullable=False))
    # The job tasks in it, in request order, with the round each one's call is for (JSON).
    keys: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    # What each key's request carried (JSON: key -> fingerprint of its images and texts). A
    # restart may have to make an input again (an edit the batch had no answer for); an
    # answer is used only while its member's request still carries the very same inputs.
    carried: str = Field(default="{}", sa_column=Column(Text, nullable=False,
                                                          server_default="{}"))
    error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
