"""Promoting a candidate: it judges every new regeneration and re-judging job from then on.

The promotion is kept as a history (table judge_promotion); a job records the candidate it was
made under (JobOptions.judge_candidate_id) and each verdict the candidate that gave it
(judge_verdict.candidate_id). A locked study's figures never move: its verdicts are frozen on
its items when it is made.
"""

import asyncio
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.accounts.audit import note
from app.errors import Invalid
from app.judges.candidates import get_candidate, spec_of
from app.judges.models import JudgeCandidate, JudgePromotion
from app.models import User
from pipeline import offline_judges
from pipeline.backend import Backend, Edit, Instruction, TaskInfo, Verdict
from pipeline.gemini import GeminiBackend
from pipeline.judge_spec import JudgeSpec


def promoted(session: Session) -> JudgeCandidate | None:
    """The candidate judging new jobs, or None for the judge of record's own prompt."""
    newest = session.scalars(select(JudgePromotion).order_by(col(JudgePromotion.id).desc())
                             .limit(1)).first()
    if newest is None or newest.candidate_id is None:
        return None
    return session.get(JudgeCandidate, newest.candidate_id)


def promote(session: Session, candidate_id: int | None, by: User | None) -> None:
    """Make ``candidate_id`` (None: the judge of record's own prompt) the judge of new jobs."""
    name = "the judge of record's own prompt"
    if candidate_id is not None:
        chosen = get_candidate(session, candidate_id)
        if chosen.members:
            raise Invalid(f"{chosen.name!r} is a panel: promote one candidate, which a job asks "
                          "once for each verdict")
        name = f"candidate {chosen.name!r}"
    session.add(JudgePromotion(candidate_id=candidate_id, promoted_by=by.id if by else None))
    note(session, "judge promoted", None, by, f"{name} judges new jobs")
    session.commit()


def checked_for_job(session: Session, backend: str, mode: str) -> int | None:
    """The promoted candidate's id, to record on a new job; Invalid when the job cannot run
    it (another backend, or the Batch API, whose requests carry the record's own prompt)."""
    candidate = promoted(session)
    if candidate is None:
        return None
    if candidate.backend != backend:
        raise Invalid(f"the promoted judge, {candidate.name!r}, runs on the {candidate.backend} "
                      f"backend: choose it for this job, or return to the judge of record's "
                      "own prompt on the judges page", "backend")
    if mode == "batch":
        raise Invalid(f"the promoted judge, {candidate.name!r}, is asked one call at a time: "
                      "run this job interactively, or return to the judge of record's own prompt",
                      "mode")
    return candidate.id


class PromotedJudge:
    """A backend whose judge is a candidate; instructions and edits go to the backend as
    they are."""

    def __init__(self, backend: Backend, candidate: JudgeCandidate) -> None:
        self.backend, self.spec = backend, spec_of(candidate)
        self.name = backend.name
        self.label = f"{backend.label}; judge: candidate {candidate.name} ({candidate.version})"
        # Each call counts under the model it calls (pipeline/loop.py's call_gate): the
        # backend's for instructions and edits, the candidate's for the judge. Without this
        # every call of a regeneration job counted under the backend's name alone.
        own: dict[str, str] = dict(getattr(backend, "models", {}))
        self.models = {**own, "judge": self.spec.model} if own else {}

    async def instruction(self, task: TaskInfo, original: bytes, history: list[dict[str, Any]],
                          feedback: list[dict[str, Any]]) -> Instruction:
        return await self.backend.instruction(task, original, history, feedback)

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        return await self.backend.edit(task, original, instruction)

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict:
        return await judge_with(self.backend, self.spec, task, original, edited, instruction)


async def judge_with(backend: Backend, spec: JudgeSpec, task: TaskInfo, original: bytes,
                     edited: bytes, instruction: str) -> Verdict:
    """The candidate's verdict. A prompt that cannot be had within its limits raises
    TemplateProblem: the step's retries (pipeline/loop.py) fail the step at once and give
    back its place in the quota, since no call was made."""
    if isinstance(backend, GeminiBackend):
        return await backend.candidate_judge(spec, task, original, edited, instruction)
    return await asyncio.to_thread(offline_judges.judge, spec, task, original, edited,
                                   instruction, 0)


def promoted_backend(engine: Engine, backend: Backend, candidate_id: int) -> PromotedJudge:
    with Session(engine) as session:
        return PromotedJudge(backend, get_candidate(session, candidate_id))
