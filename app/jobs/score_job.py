"""The judge observatory's jobs. A candidate judge scored as a job: one unit per task of the
reference study, so scoring shows its progress, can be cancelled, and is taken up again by any
worker after a restart like every other job (app/jobs/runner.py runs its units through
app/judges/scoring.py). And the regeneration aimed where the judge was wrong."""

import logging

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.db import serialised
from app.errors import Conflict, DomainError, Invalid
from app.job_models import Job, JobStatus
from app.jobs.options import JobOptions
from app.jobs.queue import JOB_CREATION_LOCK, add_job, create_job
from app.jobs.registry import available
from app.judges.candidates import get_candidate
from app.judges.drift import drift_candidate, drift_plan, note_for
from app.judges.models import JudgeCandidate
from app.judges.promotion import promoted
from app.judges.reference import Ref, as_ref, load_reference
from app.judges.schedule import record_start, take_due
from app.judges.scoring import SCORING_CONCURRENCY, judge_for, pending_tasks
from app.judges.targets import targets
from app.models import User
from app.settings import Settings

logger = logging.getLogger(__name__)
MODES = ("interactive", "batch")


def start_scoring(engine: Engine, candidate_id: int, ref: Ref | int, settings: Settings,
                  created_by: int | None = None, *, mode: str = "interactive") -> int:
    """The new job's id; Conflict, with nothing started, when there is nothing to ask or the
    candidate's backend cannot be used here (the Batch API: on Gemini only)."""
    with Session(engine) as session:
        job_id = scoring_job(session, get_candidate(session, candidate_id), as_ref(ref),
                             settings, created_by, mode=mode)
        session.commit()
        return job_id


def scoring_job(session: Session, candidate: JudgeCandidate, ref: Ref, settings: Settings,
                created_by: int | None = None, *, mode: str = "interactive") -> int:
    """start_scoring in the caller's transaction."""
    if mode not in MODES:
        raise Invalid(f"the mode is one of {', '.join(MODES)}", "mode")
    tasks = pending_tasks(session, candidate, ref)
    judge_for(candidate, settings)  # no key: refused here, before any job exists
    if not tasks:
        raise Conflict(f"nothing left to ask: every answer of {candidate.name!r} on this "
                       "reference is stored")
    if mode == "batch" and candidate.backend != "gemini":
        raise Conflict(f"{candidate.name!r} runs offline: the Batch API is Gemini's; score it "
                       "interactively")
    options = JobOptions(backend=candidate.backend, kind="score", candidate_id=candidate.id,
                         study_id=ref.id if ref.kind == "study" else None,
                         sentinel_id=ref.id if ref.kind == "sentinel" else None,
                         concurrency=SCORING_CONCURRENCY, mode=mode).within(settings)
    return add_job(session, tasks, options, created_by)


def regenerate_let_through(engine: Engine, study_id: int, settings: Settings,
                           created_by: int | None = None, rounds: int = 5) -> int:
    """A regeneration job on the tasks whose edit the readers of a locked study rejected and
    the judge accepted: judged by the promoted judge (recorded on the job), steered by the
    readers' comments, on the promoted judge's backend. Conflict when there is none."""
    with Session(engine) as session:
        found = targets(session, study_id)
        judge = promoted(session)
        backend = judge.backend if judge is not None else "offline"
    if backend not in available(settings):
        raise Conflict(f"the promoted judge runs on {backend}, and this server has no key for it: "
                       "set GOOGLE_API_KEY or GEMINI_API_KEY, or promote an offline judge")
    tasks = found.tasks_to_regenerate
    if not tasks:
        raise Conflict("no edit of this study was rejected by its readers and accepted by the "
                       "judge: nothing to regenerate")
    options = JobOptions(backend=backend, kind="regenerate", rounds=rounds,
                         use_reader_feedback=True, study_id=study_id).within(settings)
    return create_job(engine, tasks, options, created_by)


def start_drift_check(engine: Engine, ref: Ref | int, settings: Settings, by: User | None) -> int:
    """The judge of record asked again on a reference's edits, as a scoring job. The check for
    a running one, its candidate and its job are one step for every process: two clicks half
    a second apart made two jobs and a clash on the candidate's name."""
    ref = as_ref(ref)
    with Session(engine) as session:
        load_reference(session, ref)  # 404 or 409 before anything is made
        plan = drift_plan(session, settings, ref)  # rendered and checked before the lock
        serialised(session, JOB_CREATION_LOCK)
        running = _running_drift_check(session, ref)
        if running is not None:  # a double click asked the same thing twice
            raise Conflict(f"a drift check on this reference is already {running.status}: "
                           f"job {running.id}, at /jobs/{running.id}")
        made = drift_candidate(session, plan, by)
        job_id = scoring_job(session, made, ref, settings, by.id if by else None)
        session.commit()
        return job_id


def _running_drift_check(session: Session, ref: Ref) -> Job | None:
    note = note_for(ref)
    for job in session.scalars(select(Job).where(
            col(Job.kind) == "score", col(Job.status).in_((JobStatus.queued, JobStatus.running)))):
        candidate = session.get(JudgeCandidate, JobOptions.from_json(job.options).candidate_id)
        if candidate is not None and candidate.note == note:
            return job
    return None


def start_due_drift_checks(engine: Engine, settings: Settings) -> int:
    """Start every scheduled drift check that is due (a worker's idle round); how many
    started. One that cannot start is logged, keeps its reason on its schedule, and is tried
    again at its next time: it never stops the worker."""
    started = 0
    for schedule_id, ref in take_due(engine):
        try:
            job_id = start_drift_check(engine, ref, settings, None)
        except DomainError as refused:
            logger.warning("scheduled drift check on %s not started: %s", ref.query, refused)
            record_start(engine, schedule_id, None, str(refused))
            continue
        logger.info("scheduled drift check on %s started as job %s", ref.query, job_id)
        record_start(engine, schedule_id, job_id, None)
        started += 1
    return started
