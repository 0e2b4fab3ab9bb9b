"""Scoring candidates on a reference: a locked study's edits, each judged by the candidate
(every repeat, and once more with the original image first), and stored; the leaderboard
(app/judges/board.py) compares them with the readers' settled reference.

A locked study's reference cannot move, so a leaderboard read from it today reads the same
tomorrow. Scoring is resumable: an answer already stored is never asked for again.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.errors import Conflict
from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.judges.candidates import get_candidate, spec_of
from app.judges.models import CandidateVerdict, JudgeCandidate
from app.judges.reference import Ref, Reference, load_reference
from app.models import Attempt, Task
from app.settings import Settings
from app.studies.design_traits import rubric_kinds
from app.studies.models import Study, StudyItem, StudyStatus, in_figures
from pipeline import offline_judges
from pipeline.backend import BackendError, TaskInfo, Verdict
from pipeline.estimate import LOCAL, STEP_TOKENS, Estimate, Limits, describe, estimate
from pipeline.gemini import GeminiBackend
from pipeline.judge_spec import JudgeSpec, TemplateProblem
from pipeline.loop import RetryPolicy, StepFailed, unreadable, with_retries
from pipeline.ports import Quota
from pipeline.vocabulary import DIMENSIONS, JUDGE_STEP

logger = logging.getLogger(__name__)
# Tasks a scoring job works on at once (app/jobs/score_job.py), each asking its answers in turn.
SCORING_CONCURRENCY = 4
# spec, task, original, edited, instruction, repeat -> verdict
Judge = Callable[[JudgeSpec, TaskInfo, bytes, bytes, str, int], Awaitable[Verdict]]
# A job's lease check inside a write's transaction (app/jobs/lease.py Lease.hold).
Hold = Callable[[Session], None]


async def offline_judge(spec: JudgeSpec, task: TaskInfo, original: bytes, edited: bytes,
                        instruction: str, repeat: int) -> Verdict:
    return await asyncio.to_thread(offline_judges.judge, spec, task, original, edited,
                                   instruction, repeat)


def gemini_judge(backend: GeminiBackend, policy: RetryPolicy = RetryPolicy(),
                 quota: Quota | None = None,
                 cancelled: Callable[[], bool] = lambda: False) -> Judge:
    """The candidate through Gemini, retried as the pipeline retries a judge (back-off, the
    service's Retry-After, an unreadable answer asked again); each call through ``quota``,
    counted against the candidate's own model, as every other job's calls of it are."""
    async def judge(spec: JudgeSpec, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str, repeat: int) -> Verdict:
        gate = quota.gate(spec.model, STEP_TOKENS[JUDGE_STEP]) if quota is not None else None
        try:
            return await with_retries(
                JUDGE_STEP, lambda: backend.candidate_judge(spec, task, original, edited,
                                                            instruction), policy, unreadable,
                cancelled=cancelled, gate=gate)
        except StepFailed as failure:
            raise BackendError(str(failure)) from None
    return judge


def cost_of(candidate: JudgeCandidate, todo: list[tuple["Edit", int, bool]]) -> Estimate:
    """What asking the answers ``todo`` takes, as a scoring job asks them: one judge call each
    (every repeat and the order-bias run too), the answers of a task one after another, and
    SCORING_CONCURRENCY tasks at a time."""
    model = candidate.model if candidate.backend == "gemini" else f"offline {LOCAL}"
    tasks = len({edit.task_id for edit, _, _ in todo})
    return estimate(tasks, kind="rejudge", rounds=1, rejudge_times=len(todo) / max(1, tasks),
                    models={"judge": model}, limits=Limits(concurrency=SCORING_CONCURRENCY))


def cost_lines(candidate: JudgeCandidate, todo: list[tuple["Edit", int, bool]]) -> list[str]:
    """``cost_of`` in words, as the CLI prints it and the page shows it before anything starts."""
    return describe(cost_of(candidate, todo))


def judge_for(candidate: JudgeCandidate, settings: Settings) -> Judge:
    """How this candidate is asked; Conflict, before anything starts, when its backend cannot
    be used on this server."""
    if candidate.members:
        raise Conflict(f"{candidate.name!r} is a panel: its answers are its members'")
    if candidate.backend == "offline":
        return offline_judge
    key = settings.gemini_api_key.get_secret_value()
    if not key:
        raise Conflict(f"candidate {candidate.name!r} runs on Gemini, and this server has no key: "
                       "set GOOGLE_API_KEY or GEMINI_API_KEY, or use the offline backend")
    return gemini_judge(GeminiBackend(key, base_url=settings.gemini_base_url or None))


def reference_studies(session: Session) -> list[Study]:
    """Studies a candidate can be scored on: locked, with rubric answers."""
    return list(session.scalars(select(Study).where(
        col(Study.status) == StudyStatus.locked, col(Study.design).in_(rubric_kinds()))
        .order_by(col(Study.id).desc())))


@dataclass(frozen=True)
class Outlook:
    """What scoring a candidate on one reference would take, or why it cannot be scored there."""

    ref: Ref
    name: str
    left: int  # answers still to ask
    stored: int  # answers already kept
    estimate: list[str]
    problem: str | None = None


def outlook(session: Session, candidate: JudgeCandidate, ref: Ref, name: str) -> Outlook:
    try:
        reference = load_reference(session, ref)
    except Conflict as refused:
        return Outlook(ref, name, 0, 0, [], str(refused))
    stored = len(_done(session, candidate.id or 0, reference, failed_too=True))
    try:
        left = plan(session, candidate, ref, reference=reference)
    except Conflict as refused:
        return Outlook(ref, name, 0, stored, [], str(refused))
    return Outlook(ref, name, len(left), stored, cost_lines(candidate, left) if left else [])


@dataclass(frozen=True)
class Edit:
    item_id: int
    task_id: int
    attempt_id: int
    instruction: str
    study_id: int


def reference_edits(session: Session, reference: Reference) -> list[Edit]:
    """The reference's edits with a settled answer, in item order."""
    query = (select(col(StudyItem.id), col(StudyItem.task_id), col(StudyItem.attempt_id),
                    col(Attempt.instruction), col(StudyItem.study_id))
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .where(col(StudyItem.study_id).in_(reference.study_ids), in_figures())
             .order_by(col(StudyItem.id)))
    wanted = {c.item_id for c in reference.data.cases} & set(reference.settled)
    return [Edit(item, task, attempt, instruction or "", study)
            for item, task, attempt, instruction, study in session.execute(query) if item in wanted]


def _done(session: Session, candidate_id: int, reference: Reference, *,
          failed_too: bool = False) -> set[tuple[int, int, bool]]:
    """The answers kept on the reference's edits; one that failed is asked again (and left
    out here, unless ``failed_too``)."""
    query = select(col(CandidateVerdict.item_id), col(CandidateVerdict.repeat),
                   col(CandidateVerdict.original_first)).where(
        col(CandidateVerdict.candidate_id) == candidate_id,
        col(CandidateVerdict.study_id).in_(reference.study_ids))
    if not failed_too:
        query = query.where(col(CandidateVerdict.error).is_(None))
    items = set(reference.settled)
    return {(i, r, bool(o)) for i, r, o in session.execute(query) if i in items}


def plan(session: Session, candidate: JudgeCandidate, ref: Ref | int, *, order_bias: bool = True,
         reference: Reference | None = None) -> list[tuple[Edit, int, bool]]:
    """What is left to ask: each edit, each repeat in the usual order, and the first repeat
    with the original first (``reference``: the reference loaded, when at hand)."""
    if candidate.members:
        raise Conflict(f"{candidate.name!r} is a panel: it asks nothing itself, its answers are "
                       "its members' (score them)")
    reference = reference or load_reference(session, ref)
    done = _done(session, candidate.id or 0, reference)
    wanted = []
    for edit in reference_edits(session, reference):
        for repeat in range(candidate.repeats):
            wanted.append((edit, repeat, False))
        if order_bias:
            wanted.append((edit, 0, True))
    return [w for w in wanted if (w[0].item_id, w[1], w[2]) not in done]


def _images(session: Session, edit: Edit) -> tuple[TaskInfo, bytes, bytes]:
    """The task as a judge sees it, its original and the edit; LookupError when one is gone."""
    task = session.get(Task, edit.task_id)
    if task is None:
        raise LookupError(f"no task {edit.task_id}")
    info = TaskInfo(task.task_key, task.modality, task.disease, task.direction)
    try:
        original = resolve_image(session, ImageKind.source, task.source_image_id).read_bytes()
        edited = resolve_image(session, ImageKind.attempt, edit.attempt_id).read_bytes()
    except ImageNotFound as error:
        raise LookupError(f"task {info.key}: an image is missing ({error})") from None
    return info, original, edited


def _row(candidate: JudgeCandidate, edit: Edit, repeat: int, original_first: bool,
         verdict: Verdict | None, error: str | None, version: str) -> CandidateVerdict:
    fields = verdict.fields if verdict is not None and verdict.fields is not None else {}
    row = CandidateVerdict(
        candidate_id=candidate.id or 0, study_id=edit.study_id, item_id=edit.item_id, repeat=repeat,
        original_first=original_first,
        weighted_score=fields.get("weighted_score"), reason=fields.get("reason"),
        error=error or (verdict.error if verdict is not None else None), spec_version=version,
        model_version=verdict.call.model_version if verdict is not None else None)
    for name in (*DIMENSIONS, "qualified", "has_disease"):
        setattr(row, name, fields.get(name))
    return row


@dataclass(frozen=True)
class Scored:
    asked: int
    failed: int  # stored with an error: the call failed for good, or the answer was unreadable


async def _ask(engine: Engine, candidate: JudgeCandidate, edit: Edit, repeat: int,
               original_first: bool, judge: Judge, hold: Hold | None = None) -> str | None:
    """One answer asked and stored; the reason when it could not be had (it is stored with
    the reason, and asked again by the next scoring of the candidate on the study)."""
    spec = spec_of(candidate, original_first=original_first)
    verdict: Verdict | None = None
    problem: str | None = None
    try:
        info, original, edited = await asyncio.to_thread(images_of, engine, edit)
        verdict = await judge(spec, info, original, edited, edit.instruction, repeat)
    except (LookupError, BackendError, TemplateProblem) as failure:
        # A render past its limits fails this answer (stored with its reason); the job goes on.
        problem = str(failure)
        logger.warning("candidate %s on study item %s: %s", candidate.name, edit.item_id, problem)
    return await asyncio.to_thread(store_answer, engine, candidate, edit, repeat, original_first,
                                   verdict, problem, spec.version, hold)


def store_answer(engine: Engine, candidate: JudgeCandidate, edit: Edit, repeat: int,
                 original_first: bool, verdict: Verdict | None, problem: str | None,
                 version: str, hold: Hold | None = None) -> str | None:
    """The answer stored (a failed one with its reason); the reason, when it is not usable."""
    _store(engine, _row(candidate, edit, repeat, original_first, verdict, problem, version), hold)
    if problem is None and (verdict is None or verdict.fields is None):
        problem = (verdict.error if verdict is not None else None) or "no verdict"
    return problem


def images_of(engine: Engine, edit: Edit) -> tuple[TaskInfo, bytes, bytes]:
    with Session(engine) as session:
        return _images(session, edit)


async def score(engine: Engine, candidate_id: int, ref: Ref | int, judge: Judge, *,
                order_bias: bool = True,
                on_progress: Callable[[int, int], None] | None = None) -> Scored:
    """Ask the candidate what is left, one edit at a time, each answer stored as it comes."""
    with Session(engine) as session:
        candidate = get_candidate(session, candidate_id)
        todo = plan(session, candidate, ref, order_bias=order_bias)
        session.expunge(candidate)
    failed = 0
    for n, (edit, repeat, original_first) in enumerate(todo, start=1):
        if await _ask(engine, candidate, edit, repeat, original_first, judge):
            failed += 1
        if on_progress is not None:
            on_progress(n, len(todo))
    return Scored(len(todo), failed)


async def score_task(engine: Engine, candidate_id: int, ref: Ref | int, task_id: int,
                     judge: Judge, *, hold: Hold | None = None,
                     cancelled: Callable[[], bool] = lambda: False) -> str | None:
    """A scoring job's unit: every answer still missing on one task's edits of the reference;
    the last reason one could not be had. ``hold``: the job's lease check, run inside each
    write's transaction (it raises when another worker has taken the job over)."""
    with Session(engine) as session:
        candidate = get_candidate(session, candidate_id)
        todo = [t for t in plan(session, candidate, ref) if t[0].task_id == task_id]
        session.expunge(candidate)
    error = None
    for edit, repeat, original_first in todo:
        if cancelled():  # between answers, not only between tasks: each may take seconds
            break
        error = await _ask(engine, candidate, edit, repeat, original_first, judge,
                           hold) or error
    return error


def _store(engine: Engine, row: CandidateVerdict, hold: Hold | None = None) -> None:
    """The answer in its place: over an earlier failed one for the same edit, repeat and
    order, never over a usable one (another worker's stands); nothing when ``hold`` finds
    the job taken over."""
    with Session(engine) as session:
        if hold is not None:
            hold(session)
        session.execute(delete(CandidateVerdict).where(
            col(CandidateVerdict.candidate_id) == row.candidate_id,
            col(CandidateVerdict.item_id) == row.item_id, col(CandidateVerdict.repeat) == row.repeat,
            col(CandidateVerdict.original_first) == row.original_first,
            col(CandidateVerdict.error).is_not(None)))
        session.add(row)
        try:
            session.commit()
        except IntegrityError:
            session.rollback()


def pending_tasks(session: Session, candidate: JudgeCandidate, ref: Ref | int) -> list[int]:
    """The tasks whose edits still miss an answer: a scoring job's units."""
    return list(dict.fromkeys(edit.task_id for edit, _, _ in plan(session, candidate, ref)))
