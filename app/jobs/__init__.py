"""Pipeline jobs: the app's side of the generate-and-judge engine (pipeline/). Jobs are kept
in the database and worked by workers that claim them; their runs are stored through the
engine's ports (pipeline/ports.py: store.RunRounds, rate_limit.CallLimiter).

This package is the one door the web edge and the CLI use to start and follow jobs: they
import from here, never from its modules or from the pipeline."""

from app.jobs.batch_records import BatchView, job_batches
from app.jobs.dicom_send import start_sending
from app.jobs.forms import JobForm, job_selection
from app.jobs.lease import Lease
from app.jobs.options import JobOptions, job_estimate
from app.jobs.queue import create_job, request_cancel
from app.jobs.registry import BACKENDS, UnknownBackend, available, make_backend
from app.jobs.runner import MIN_STALE, claim, run_job
from app.jobs.score_job import regenerate_let_through, start_drift_check, start_scoring
from app.jobs.view import get_job, job_runs, job_summary, recent_jobs
from app.jobs.worker import pipeline_output, warm_judge_renders, work
from pipeline.estimate import (
    BATCH_TARGET_HOURS,
    PRICES_AS_OF,
    Estimate,
    describe,
    dollars,
    duration,
    tokens,
)
from pipeline.gemini import DEFAULT_MODELS

__all__ = [
    "BACKENDS",
    "BATCH_TARGET_HOURS",
    "DEFAULT_MODELS",
    "MIN_STALE",
    "PRICES_AS_OF",
    "BatchView",
    "Estimate",
    "JobForm",
    "JobOptions",
    "Lease",
    "UnknownBackend",
    "available",
    "claim",
    "create_job",
    "describe",
    "dollars",
    "duration",
    "get_job",
    "job_batches",
    "job_estimate",
    "job_runs",
    "job_selection",
    "job_summary",
    "make_backend",
    "pipeline_output",
    "recent_jobs",
    "regenerate_let_through",
    "request_cancel",
    "run_job",
    "start_drift_check",
    "start_scoring",
    "start_sending",
    "tokens",
    "warm_judge_renders",
    "work",
]
