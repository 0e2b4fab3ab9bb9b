"""A candidate judge scored as a job: one unit per task of the reference study, so scoring
shows its progress, can be cancelled, and is taken up again by any worker after a restart
like every other job (app/jobs/runner.py runs its units through app/judges/scoring.py)."""

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import Conflict
from app.jobs.options import JobOptions
from app.jobs.runner import create_job
from app.judges.candidates import get_candidate
from app.judges.scoring import judge_for, pending_tasks
from app.settings import Settings

CONCURRENCY = 4


def start_scoring(engine: Engine, candidate_id: int, study_id: int, settings: Settings,
                  created_by: int | None = None) -> int:
    """The new job's id; Conflict, with nothing started, when there is nothing to ask or the
    candidate's backend cannot be used here."""
    with Session(engine) as session:
        candidate = get_candidate(session, candidate_id)
        tasks = pending_tasks(session, candidate, study_id)
        judge_for(candidate, settings)  # no key: refused here, before any job exists
        backend = candidate.backend
    if not tasks:
        raise Conflict(f"nothing left to ask: every answer of {candidate.name!r} on this study "
                       "is stored")
    options = JobOptions(backend=backend, kind="score", candidate_id=candidate_id,
                         study_id=study_id, concurrency=CONCURRENCY)
    return create_job(engine, tasks, options, created_by)
