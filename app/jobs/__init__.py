"""Pipeline jobs as the web edge and the CLI start and follow them: the one door into the
generate-and-judge engine (pipeline/), so that neither reaches into its modules."""

from pipeline.batch_records import BatchView, job_batches
from pipeline.estimate import (
    BATCH_TARGET_HOURS,
    PRICES_AS_OF,
    Estimate,
    describe,
    dollars,
    duration,
    tokens,
)
from pipeline.export import ExportError, export_runs
from pipeline.gemini import DEFAULT_MODELS
from pipeline.job_options import JobOptions, job_estimate
from pipeline.job_view import job_runs, job_summary
from pipeline.jobs import MIN_STALE, claim, create_job, request_cancel, run_job
from pipeline.lease import Lease
from pipeline.registry import BACKENDS, UnknownBackend, available, make_backend
from pipeline.worker import pipeline_output, work

__all__ = [
    "BACKENDS", "BATCH_TARGET_HOURS", "DEFAULT_MODELS", "MIN_STALE", "PRICES_AS_OF",
    "BatchView", "Estimate", "ExportError", "JobOptions", "Lease", "UnknownBackend", "available", "claim",
    "create_job", "describe", "dollars", "duration", "export_runs", "job_batches", "job_estimate", "job_runs",
    "job_summary", "make_backend", "pipeline_output", "request_cancel", "run_job", "tokens",
    "work",
]
