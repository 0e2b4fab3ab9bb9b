"""The database side of a regeneration run: start it, store each round as it ends, finish it.

Every round is written in one transaction. Its image goes to a name no other write uses
(the round, then a random part), renamed there from a partial file in the step that commits
the row, and removed again if the commit fails (unless the commit went through all the same,
which a dropped connection can hide); so a process killed at any moment leaves
either a whole round or none of it, and a stored verdict always points at the very image it
judged, whatever another worker wrote meanwhile. A resumed run reads back the rounds it
already has and continues from the next one. Writes made for a job check its lease first
(app/jobs/lease.py): a worker that lost the job writes nothing.
"""

import json
import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.cases.summary import task_summary
from app.images.files import ImageKind, ImageNotFound, resolve_image, sniff_image
from app.images.final_metrics import sync_final
from app.images.store import is_remote, normalised, store_for
from app.job_models import JobTask, JobTaskStatus
from app.jobs.lease import Lease, hold
from app.models import Attempt, DataRoot, JudgeVerdict, Run, RunOrigin, Task
from pipeline.backend import TaskInfo
from pipeline.ports import Round
from pipeline.redaction import redact_optional
from pipeline.vocabulary import DIMENSIONS, JUDGE_STEP, Outcome

logger = logging.getLogger(__name__)


def output_root(engine: Engine, location: str | Path) -> int:
    """The data root that regenerated images are written under (made once): a folder, or
    an fsspec URL (app/images/store.py)."""
    where = normalised(location)
    if not is_remote(where):
        Path(where).mkdir(parents=True, exist_ok=True)
    with Session(engine) as session:
        root = session.scalars(select(DataRoot).where(col(DataRoot.path) == where)).first()
        if root is None:
            root = DataRoot(kind="run", path=where)
            session.add(root)
            session.commit()
            session.refresh(root)
        return root.id or 0


def task_info(session: Session, task_id: int) -> tuple[TaskInfo, bytes]:
    """The task as the backend sees it, and the bytes of its original image."""
    task = session.get(Task, task_id)
    if task is None:
        raise LookupError(f"no task {task_id}")
    try:
        original = resolve_image(session, ImageKind.source, task.source_image_id).read_bytes()
    except ImageNotFound as error:
        raise LookupError(f"task {task.task_key}: the original image is missing ({error})") from None
    return TaskInfo(task.task_key, task.modality, task.disease, task.direction), original


def start_run(engine: Engine, task_id: int, job_task_id: int | None = None,
              lease: Lease | None = None) -> int:
    """A new open run; for a job's task, recorded on the job task in the same transaction,
    so a crash can never leave a run its job does not know about."""
    with Session(engine) as session:
        hold(session, lease)
        run = Run(task_id=task_id, origin=RunOrigin.regeneration.value, outcome=Outcome.running,
                  fingerprint=f"regeneration-{os.urandom(8).hex()}")
        session.add(run)
        session.flush()
        if job_task_id is not None:
            job_task = session.get(JobTask, job_task_id)
            assert job_task is not None
            job_task.run_id, job_task.status = run.id, JobTaskStatus.running.value
            session.add(job_task)
        session.commit()
        return run.id or 0


def run_outcome(engine: Engine, run_id: int) -> Outcome:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is None:
            raise LookupError(f"no run {run_id}")
        return Outcome(run.outcome)


def rounds_done(engine: Engine, run_id: int) -> list[dict[str, Any]]:
    """The history of a run so far, as the refinement prompt reads it."""
    with Session(engine) as session:
        rows = session.execute(
            select(Attempt, JudgeVerdict).outerjoin(JudgeVerdict, col(JudgeVerdict.attempt_id) == Attempt.id)
            .where(col(Attempt.run_id) == run_id).order_by(col(Attempt.round))).all()
    history = []
    for attempt, verdict in rows:
        # Said so that the instruction model can act on it: a parser's message it cannot.
        if attempt.edit_error:
            entry: dict[str, Any] = {"error": "The image model returned no edited image for this "
                                              "instruction; state the requested change plainly "
                                              "and ask for the edited image explicitly."}
        elif verdict is None or verdict.error:
            entry = {"error": "The judge's assessment of this round could not be read, so the "
                              "edit was neither accepted nor rejected on any criterion; keep the "
                              "instruction's intent and make the finding unambiguous."}
        else:
            entry = {d: getattr(verdict, d) for d in DIMENSIONS} | {
                "qualified": verdict.qualified, "reason": verdict.reason or ""}
        history.append({"round": attempt.round, "instruction": attempt.instruction or "",
                        "verdict": entry})
    return history


def save_round(engine: Engine, run_id: int, root_id: int, root: str | Path, item: Round,
               lease: Lease | None = None, candidate_id: int | None = None) -> int:
    """Store the round: its rows and its image, together or not at all."""
    relpath = staged = None
    images = store_for(root)
    if item.image is not None:
        # Named for what the bytes are: a PNG from the image model stays a .png.
        _mime, suffix = sniff_image(item.image) or ("image/jpeg", ".jpeg")
        relpath = f"runs/{run_id}/round-{item.number}-{secrets.token_hex(6)}{suffix}"
        staged = images.stage(relpath, item.image)
    try:
        with Session(engine) as session:
            hold(session, lease)
            attempt = Attempt(run_id=run_id, round=item.number, instruction=item.instruction,
                              instruction_thinking=item.instruction_thinking,
                              image_root_id=root_id if relpath else None, image_relpath=relpath,
                              image_present=relpath is not None,
                              edit_error=redact_optional(item.edit_error),
                              calls=json.dumps(item.calls))
            session.add(attempt)
            session.flush()
            if item.verdict is not None or item.verdict_error is not None:
                session.add(verdict_row(attempt.id or 0, item.verdict, item.verdict_error,
                                        thinking=item.judge_thinking, model=item.judge_model,
                                        prompt_version=item.prompt_version, raw=item.raw,
                                        candidate_id=candidate_id))
                session.flush()
            if relpath is not None:
                images.place(relpath, staged)
            session.commit()
            return attempt.id or 0
    except BaseException:
        # A commit cut short (a dropped connection, a paused worker woken up) may have been
        # applied all the same: its row then points at this image, so the image stays unless
        # the database says for certain that no row holds it. An orphan file is harmless; a
        # row whose image was deleted is a round lost.
        if relpath is not None and not _row_holds(engine, relpath):
            images.discard(relpath, staged)
        raise


def _row_holds(engine: Engine, relpath: str) -> bool:
    """Whether a stored attempt points at this image; True when the database cannot say."""
    try:
        with Session(engine) as session:
            return session.scalars(select(col(Attempt.id)).where(
                col(Attempt.image_relpath) == relpath)).first() is not None
    except Exception:
        logger.exception("could not tell whether image %s was committed; it is kept", relpath)
        return True


def verdict_row(attempt_id: int, fields: dict[str, Any] | None, error: str | None, *,
                thinking: str, model: str | None, prompt_version: str | None,
                raw: str, candidate_id: int | None = None) -> JudgeVerdict:
    """A judge's answer as stored, from a refinement round or a re-judge alike."""
    fields = fields or {}
    return JudgeVerdict(
        attempt_id=attempt_id, error=redact_optional(error),
        compliance=fields.get("compliance"), structure=fields.get("structure"),
        realism=fields.get("realism"), fidelity=fields.get("fidelity"),
        qualified=fields.get("qualified"), has_disease=fields.get("has_disease"),
        weighted_score=fields.get("weighted_score"), reason=fields.get("reason"),
        thinking_summary=thinking or None, model=model, prompt_version=prompt_version,
        raw_json=raw or None, candidate_id=candidate_id)


def finish_run(engine: Engine, run_id: int, outcome: Outcome, *, success_round: int | None = None,
               failure_step: str | None = None, failure_error: str | None = None,
               lease: Lease | None = None) -> None:
    """Close the run and make it the task's latest: the listing reads the task row."""
    with Session(engine) as session:
        hold(session, lease)
        run = session.get(Run, run_id)
        assert run is not None
        attempts = session.scalars(select(Attempt).where(col(Attempt.run_id) == run_id)
                                   .order_by(col(Attempt.round))).all()
        run.outcome, run.n_rounds, run.success_round = outcome.value, len(attempts), success_round
        run.final_instruction = attempts[-1].instruction if attempts else None
        # Upstream errors can echo the API key; nothing shaped like one is stored.
        run.failure_step = failure_step
        run.failure_error = redact_optional(failure_error)
        run.failure_round = (None if not failure_step else
                             len(attempts) if failure_step == JUDGE_STEP else len(attempts) + 1)
        task = session.get(Task, run.task_id)
        assert task is not None
        verdicts = [{d: getattr(v, d) for d in DIMENSIONS} for v in session.scalars(
            select(JudgeVerdict).join(Attempt, col(Attempt.id) == JudgeVerdict.attempt_id)
            .where(col(Attempt.run_id) == run_id))]
        summary = task_summary(run_id, outcome, [(a.id or 0, a.image_present) for a in attempts],
                               verdicts)
        for name, value in summary.items():
            setattr(task, name, value)
        session.add_all([run, task])
        session.flush()
        sync_final(session, col(Task.id) == task.id)  # the new edit has no metrics yet
        session.commit()


def attempts_of(engine: Engine, run_id: int) -> int:
    with Session(engine) as session:
        return int(session.scalar(select(func.count()).select_from(Attempt)
                                  .where(col(Attempt.run_id) == run_id)) or 0)


def task_info_of(engine: Engine, task_id: int) -> tuple[TaskInfo, bytes]:
    with Session(engine) as session:
        return task_info(session, task_id)


@dataclass(frozen=True)
class RunRounds:
    """The refinement loop's ``Rounds`` (pipeline/ports.py) kept in this database: new
    images go under the data root ``root_id`` at ``root``, and a job's writes hold its
    lease. A job's run is started by the job (``start_run`` with its job task), not here."""

    engine: Engine
    root_id: int
    root: str | Path
    lease: Lease | None = field(default=None)
    candidate_id: int | None = None  # the promoted judge the job was made under

    def task(self, task_id: int) -> tuple[TaskInfo, bytes]:
        return task_info_of(self.engine, task_id)

    def start_run(self, task_id: int) -> int:
        return start_run(self.engine, task_id, lease=self.lease)

    def outcome(self, run_id: int) -> Outcome:
        return run_outcome(self.engine, run_id)

    def history(self, run_id: int) -> list[dict[str, Any]]:
        return rounds_done(self.engine, run_id)

    def save_round(self, run_id: int, item: Round) -> int:
        return save_round(self.engine, run_id, self.root_id, self.root, item, self.lease,
                          self.candidate_id)

    def finish_run(self, run_id: int, outcome: Outcome, *, success_round: int | None = None,
                   failure_step: str | None = None, failure_error: str | None = None) -> None:
        finish_run(self.engine, run_id, outcome, success_round=success_round,
                   failure_step=failure_step, failure_error=failure_error, lease=self.lease)
