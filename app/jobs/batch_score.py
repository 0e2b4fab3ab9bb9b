"""A candidate judge scored through the Batch API: every answer still to ask on the reference
goes in one wave of inline batches (at half the interactive price), recorded before it is
submitted like a regeneration's batches (app/jobs/batch_steps.py).

A restarted worker asks for what is still missing: the wave's batches are found again (in
job_batch, or at the API by display name) and their answers matched by key and by what each
request carried, so nothing is asked twice. An answer the batch could not give usably is
asked again interactively, with the usual retries; one that still fails is stored with its
reason, and asked again by the next scoring of the candidate.
"""

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from app.job_models import JobTask, JobTaskStatus
from app.jobs.batch_steps import BatchSteps, Member
from app.judges.candidates import get_candidate, spec_of
from app.judges.models import JudgeCandidate
from app.judges.reference import Ref
from app.judges.scoring import Edit, images_of, plan, store_answer
from pipeline.backend import TaskInfo, Verdict
from pipeline.judge_spec import JudgeSpec, TemplateProblem
from pipeline.loop import unreadable
from pipeline.vocabulary import Outcome

WAVE = 1  # one wave holds every answer: a candidate's answers do not depend on each other


@dataclass
class Ask(Member):
    """One answer to ask: an edit, a repeat, an image order."""

    edit: Edit | None = None
    repeat: int = 0
    original_first: bool = False
    edited: bytes = b""
    spec: JudgeSpec | None = None

    @property
    def key(self) -> str:
        assert self.edit is not None
        return f"{self.job_task_id}:{self.edit.item_id}:{self.repeat}:{int(self.original_first)}"


@dataclass
class BatchScore(BatchSteps):
    candidate_id: int = 0
    ref: Ref = field(default_factory=lambda: Ref("study", 0))

    async def score(self) -> None:
        candidate, todo, open_tasks = await asyncio.to_thread(self._todo)
        asks: list[Ask] = []
        problems: dict[int, str] = {}  # job task -> the last reason an answer could not be had
        # An edit's images, read once for all its repeats and orders: a wave holds every
        # answer, and three copies of a thousand edits' images would be gigabytes.
        images: dict[int, tuple[TaskInfo, bytes, bytes]] = {}
        for edit, repeat, first in todo:
            job_task_id = open_tasks.get(edit.task_id)
            if job_task_id is None:
                continue  # its task was finished before a restart
            spec = spec_of(candidate, original_first=first)
            try:
                if edit.item_id not in images:
                    images[edit.item_id] = await asyncio.to_thread(images_of, self.engine, edit)
                info, original, edited = images[edit.item_id]
            except LookupError as error:
                await asyncio.to_thread(store_answer, self.engine, candidate, edit, repeat, first,
                                        None, str(error), spec.version, self.lease.hold)
                problems[job_task_id] = str(error)
                continue
            asks.append(Ask(job_task_id, edit.task_id, 0, 0, info, original, [], [], edit=edit,
                            repeat=repeat, original_first=first, edited=edited, spec=spec))
        backend = self.backend

        def request(a: Ask) -> Any:
            assert a.spec is not None and a.edit is not None
            return backend.candidate_request(a.spec, a.info, a.original, a.edited, a.edit.instruction)

        def interactive(member: Member) -> Awaitable[Verdict]:
            a = member if isinstance(member, Ask) else None
            assert a is not None and a.spec is not None and a.edit is not None
            return backend.candidate_judge(a.spec, a.info, a.original, a.edited, a.edit.instruction)

        requests, rendered = [], []
        for a in asks:
            assert a.spec is not None and a.edit is not None
            try:
                requests.append(await asyncio.to_thread(request, a))
                rendered.append(a)
            except TemplateProblem as refused:  # this answer fails; the batch goes on
                await asyncio.to_thread(store_answer, self.engine, candidate, a.edit, a.repeat,
                                        a.original_first, None, str(refused), a.spec.version,
                                        self.lease.hold)
                problems[a.job_task_id] = str(refused)
        asks = rendered
        answered = {a.key for a in await self._step(WAVE, "judge", list(asks), requests,
                                                    interactive, unreadable)}
        for a in asks:
            assert a.edit is not None and a.spec is not None
            failure = a.results.get("judge_failure")
            verdict = a.results.get("judge") if a.key in answered else None
            problem = await asyncio.to_thread(
                store_answer, self.engine, candidate, a.edit, a.repeat, a.original_first, verdict,
                str(failure) if failure is not None else None, a.spec.version, self.lease.hold)
            if problem is not None:
                problems[a.job_task_id] = problem
        for job_task_id in open_tasks.values():
            problem = problems.get(job_task_id)
            await self.finish_task(job_task_id, None if problem else Outcome.success, problem)

    def _todo(self) -> tuple[JudgeCandidate, list[tuple[Edit, int, bool]], dict[int, int]]:
        """The candidate, the answers still to ask, and the job's open tasks by task id."""
        with Session(self.engine) as session:
            candidate = get_candidate(session, self.candidate_id)
            todo = plan(session, candidate, self.ref)
            open_tasks = {task_id: job_task_id for job_task_id, task_id in session.execute(
                select(col(JobTask.id), col(JobTask.task_id)).where(
                    col(JobTask.job_id) == self.lease.job_id,
                    col(JobTask.status) != JobTaskStatus.done))}
            session.expunge(candidate)
        return candidate, todo, open_tasks
