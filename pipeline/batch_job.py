"""A job through the Batch API: every open task's next round goes as one wave of batches
(instructions, then edits, then verdicts), at half the interactive price.

Each batch is recorded (job_batch) before it is submitted, with the job tasks and rounds it
holds. A restarted worker finds the wave's batches there, or at the API by their display
name, and polls them again; it never submits the same calls twice. Requests are rebuilt
from the stored history, so they are the ones that were sent. Answers are read by the code
that reads interactive answers, and a round is stored exactly as an interactive round is.
A request the batch could not answer usably (an error, no image, an unreadable verdict), or
every request of a batch that failed or expired, is made again as an interactive call with
the usual retries; a blocked answer ends its run as blocked.
"""

import asyncio
import json
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import JobBatch, JobTask, Outcome, utcnow
from pipeline import store
from pipeline.backend import BackendError, Edit, Instruction, TaskInfo, Verdict
from pipeline.feedback import reader_feedback
from pipeline.gemini import GeminiBackend, Request
from pipeline.gemini_batch import ENDED, SUBMITTING, SUCCEEDED, Answer, Batches, parts
from pipeline.lease import Lease
from pipeline.loop import (
    CancelledWhileWaiting,
    RetryPolicy,
    StepBlocked,
    StepFailed,
    call_gate,
    end_on,
    no_image,
    round_record,
    unreadable,
    with_retries,
)
from pipeline.rate_limit import CallLimiter
from pipeline.rejudge import latest_edit, store_verdicts

logger = logging.getLogger(__name__)
APPLIED = "APPLIED"  # a re-judge wave's verdicts are stored: never stored again
FinishTask = Callable[[int, Outcome | None, str | None], Awaitable[None]]


@dataclass
class Member:
    """One job task in a wave: the round it is on, and what that round has produced."""

    job_task_id: int
    task_id: int
    run_id: int
    number: int
    info: TaskInfo
    original: bytes
    history: list[dict[str, Any]]
    feedback: list[dict[str, Any]]
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.job_task_id}:{self.number}"


@dataclass
class BatchRun:
    engine: Engine
    lease: Lease
    backend: GeminiBackend
    root_id: int
    root: Path
    policy: RetryPolicy
    limiter: CallLimiter
    cancel: threading.Event
    finish_task: FinishTask
    rounds: int = 5
    rejudge_times: int = 3
    use_reader_feedback: bool = False
    poll_seconds: float = 30.0

    def __post_init__(self) -> None:
        self.batches = Batches(self.backend)

    # Regeneration: waves of rounds.

    async def regenerate(self) -> None:
        wave = max(1, await asyncio.to_thread(_last_wave, self.engine, self.lease.job_id))
        while not self.cancel.is_set():
            recorded = bool(await asyncio.to_thread(_records, self.engine, self.lease.job_id,
                                                    wave, "instruction"))
            members = await self._members(wave, recorded)
            if members:
                await self._round(wave, members)
            elif not recorded:
                return  # no open task is left
            wave += 1

    async def _members(self, wave: int, recorded: bool) -> list[Member]:
        if recorded:  # a wave begun before a restart: exactly the tasks and rounds it holds
            keys = [k for r in await asyncio.to_thread(_records, self.engine, self.lease.job_id,
                                                       wave, "instruction")
                    for k in json.loads(r.keys)]
            wanted = [(int(a), int(b)) for a, b in (k.split(":") for k in keys)]
        else:
            wanted = [(t, 0) for t in await asyncio.to_thread(_open_tasks, self.engine,
                                                              self.lease.job_id)]
        members = []
        for job_task_id, number in wanted:
            member = await self._member(job_task_id, number)
            if member is not None:
                members.append(member)
        return members

    async def _member(self, job_task_id: int, number: int) -> Member | None:
        """The task ready for its round, or None when it has nothing more to do here."""
        job_task = await asyncio.to_thread(_job_task, self.engine, job_task_id)
        if job_task.status == "done":
            return None
        run_id = job_task.run_id
        if run_id is None:
            run_id = await asyncio.to_thread(store.start_run, self.engine, job_task.task_id,
                                             job_task_id, self.lease)
        if await self._settled(job_task_id, run_id):
            return None
        history = await asyncio.to_thread(store.rounds_done, self.engine, run_id)
        if number and len(history) >= number:
            return None  # stored before a restart; its next round is the next wave's
        try:
            info, original = await asyncio.to_thread(_task_info, self.engine, job_task.task_id)
        except LookupError as error:
            await end_on(self.engine, run_id, StepFailed("read_original", str(error)), self.lease)
            await self.finish_task(job_task_id, Outcome.api_failed, None)
            return None
        feedback = (await asyncio.to_thread(reader_feedback, self.engine, job_task.task_id)
                    if self.use_reader_feedback else [])
        return Member(job_task_id, job_task.task_id, run_id, len(history) + 1, info, original,
                      history, feedback)

    async def _settled(self, job_task_id: int, run_id: int) -> bool:
        """Finish a run whose last stored round already decided it (a restart between
        storing the round and finishing the run)."""
        outcome = await asyncio.to_thread(store.run_outcome, self.engine, run_id)
        if outcome != store.RUNNING:
            await self.finish_task(job_task_id, Outcome(outcome)
                                   if outcome in Outcome.__members__ else None, None)
            return True
        history = await asyncio.to_thread(store.rounds_done, self.engine, run_id)
        last = history[-1]["verdict"] if history else {}
        if last.get("qualified"):
            await self._finish(job_task_id, run_id, Outcome.success, len(history))
            return True
        if len(history) >= self.rounds:
            await self._finish(job_task_id, run_id, Outcome.failed)
            return True
        return False

    async def _finish(self, job_task_id: int, run_id: int, outcome: Outcome,
                      success_round: int | None = None) -> None:
        await asyncio.to_thread(partial(store.finish_run, self.engine, run_id, outcome,
                                        success_round=success_round, lease=self.lease))
        await self.finish_task(job_task_id, outcome, None)

    async def _round(self, wave: int, members: list[Member]) -> None:
        backend = self.backend

        def instruction(m: Member) -> Awaitable[Instruction]:
            return backend.instruction(m.info, m.original, m.history, m.feedback)

        def edit(m: Member) -> Awaitable[Edit]:
            return backend.edit(m.info, m.original, m.results["instruction"].text)

        def judge(m: Member) -> Awaitable[Verdict]:
            return backend.judge(m.info, m.original, m.results["edit"].image,
                                 m.results["instruction"].text)

        alive = await self._step(wave, "instruction", members, [
            backend.instruction_request(m.info, m.original, m.history, m.feedback)
            for m in members], instruction, lambda _: None)
        alive = await self._step(wave, "edit", alive, [
            backend.edit_request(m.original, m.results["instruction"].text) for m in alive],
            edit, no_image)
        to_judge = [m for m in alive if m.results["edit"].image is not None]
        judged = {m.key for m in await self._step(wave, "judge", to_judge, [
            backend.judge_request(m.info, m.original, m.results["edit"].image,
                                  m.results["instruction"].text) for m in to_judge],
            judge, unreadable)}
        for m in alive:
            verdict = m.results.get("judge") if m.key in judged else None
            item = round_record(backend, m.number, m.results["instruction"], m.results["edit"],
                                verdict, mode="batch")
            await asyncio.to_thread(store.save_round, self.engine, m.run_id, self.root_id,
                                    self.root, item, self.lease)
            failure = m.results.get("judge_failure")
            if failure is not None:  # the edit is kept; the run ends as interactive ones do
                await self.finish_task(m.job_task_id, await end_on(
                    self.engine, m.run_id, failure, self.lease), None)
                continue
            await self._settled(m.job_task_id, m.run_id)

    async def _step(self, wave: int, step: str, members: list[Member], requests: list[Request],
                    interactive: Callable[[Member], Awaitable[Any]],
                    check: Callable[[Any], str | None]) -> list[Member]:
        """Run one step of the wave through the Batch API; the members that got a result
        (in ``results[step]``). A member whose step failed for good has its run ended,
        except when the judge failed: then the round's edit is still stored."""
        if not members:
            return []
        answers = await self._answers(wave, step, members, requests)
        name = step_name(step, members[0].number)
        kept = []
        for member, request in zip(members, requests, strict=True):
            try:
                member.results[step] = await self._result(
                    step, name, request, answers.get(member.key), check,
                    partial(interactive, member), member)
                kept.append(member)
            except StepFailed as failure:
                if step == "judge":
                    member.results["judge_failure"] = failure
                    continue
                await self.finish_task(member.job_task_id, await end_on(
                    self.engine, member.run_id, failure, self.lease), None)
        return kept

    async def _result(self, step: str, name: str, request: Request, answer: Answer | None,
                      check: Callable[[Any], str | None],
                      interactive: Callable[[], Awaitable[Any]], member: Member) -> Any:
        if answer is not None:
            try:
                result = self.batches.read(step, request, answer)
                if check(result) is None:
                    return result
                logger.info("job %s task %s: %s answer unusable in the batch; asked again "
                            "interactively", self.lease.job_id, member.task_id, step)
            except BackendError as error:
                if error.blocked:
                    raise StepBlocked(name, str(error)) from None
                logger.info("job %s task %s: %s not answered by the batch (%s); asked again "
                            "interactively", self.lease.job_id, member.task_id, step, error)
        return await with_retries(name, interactive, self.policy, check,
                                  cancelled=self.cancel.is_set,
                                  gate=call_gate(self.limiter, self.backend, name))

    async def _answers(self, wave: int, step: str, members: list[Member],
                       requests: list[Request]) -> dict[str, Answer]:
        """Each member's answer from the wave's batches of this step: found again when they
        were submitted before, else submitted now; polled until they end."""
        keys = [m.key for m in members]
        records = await asyncio.to_thread(_records, self.engine, self.lease.job_id, wave, step)
        if not records:
            records = [await asyncio.to_thread(
                _record, self.engine, self.lease, wave, step, part,
                self.backend.models[step], [keys[i] for i in indexes])
                for part, indexes in enumerate(parts(requests))]
        by_key = dict(zip(keys, requests, strict=True))
        answers: dict[str, Answer] = {}
        for record in records:
            if record.state == APPLIED:
                continue
            if record.name is None:
                await self._submit(record, step, by_key)
            answers |= await self._wait(record)
        return answers

    async def _submit(self, record: JobBatch, step: str, by_key: dict[str, Request]) -> None:
        found = await self._retrying("find_batch", partial(self.batches.find, record.display_name))
        if found is None:
            keys = [k for k in json.loads(record.keys) if k in by_key]
            found = await self._retrying("submit_batch", partial(
                self.batches.submit, step, [by_key[k] for k in keys], keys, record.display_name))
            logger.info("job %s: submitted %s (%d %s calls)", self.lease.job_id, found[0],
                        len(keys), step)
        record.name, record.state = found
        await asyncio.to_thread(_update, self.engine, self.lease, record)

    async def _wait(self, record: JobBatch) -> dict[str, Answer]:
        assert record.name is not None
        while True:
            state, answers = await self._retrying("poll_batch", partial(self.batches.poll,
                                                                        record.name))
            if state != record.state:
                record.state = state
                await asyncio.to_thread(_update, self.engine, self.lease, record)
            if state in ENDED:
                if state != SUCCEEDED:
                    logger.warning("job %s: %s ended %s; its calls are made interactively",
                                   self.lease.job_id, record.name, state)
                return answers or {}
            if self.cancel.is_set():
                raise CancelledWhileWaiting()
            await asyncio.sleep(self.poll_seconds)

    async def _retrying(self, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await with_retries(name, call, self.policy, cancelled=self.cancel.is_set)
        except StepFailed as failure:
            # The Batch API itself is failing: nothing can go on until it answers again.
            raise BackendError(str(failure)) from None

    # Re-judging: one wave per pass of the judge over every task's latest edit.

    async def rejudge(self) -> None:
        edits: dict[int, Any] = {}
        for job_task_id in await asyncio.to_thread(_open_tasks, self.engine, self.lease.job_id):
            job_task = await asyncio.to_thread(_job_task, self.engine, job_task_id)
            try:
                edits[job_task_id] = await asyncio.to_thread(latest_edit, self.engine,
                                                             job_task.task_id)
            except LookupError as error:
                await self.finish_task(job_task_id, None, str(error))
        for wave in range(1, self.rejudge_times + 1):
            if self.cancel.is_set():
                return
            records = await asyncio.to_thread(_records, self.engine, self.lease.job_id, wave,
                                              "judge")
            if records and all(r.state == APPLIED for r in records):
                continue
            members = [Member(j, 0, 0, wave, e[0], e[1], [], []) for j, e in edits.items()]
            for m, (_info, _original, attempt_id, _instruction, _edited) in zip(
                    members, edits.values(), strict=True):
                m.results["attempt"] = attempt_id
            requests = [self.backend.judge_request(e[0], e[1], e[4], e[3]) for e in edits.values()]

            def judge(m: Member) -> Awaitable[Verdict]:
                info, original, _attempt, instruction, edited = edits[m.job_task_id]
                return self.backend.judge(info, original, edited, instruction)

            judged = await self._step(wave, "judge", members, requests, judge, unreadable)
            failed = {m.job_task_id: m.results["judge_failure"] for m in members
                      if "judge_failure" in m.results}
            for job_task_id, failure in failed.items():
                await self.finish_task(job_task_id, None, str(failure))
                edits.pop(job_task_id)
            # The wave's verdicts and its being done, in one transaction: never stored twice.
            await asyncio.to_thread(store_verdicts, self.engine, self.lease,
                                    [(m.results["attempt"], m.results["judge"]) for m in judged],
                                    partial(_mark_applied, job_id=self.lease.job_id, wave=wave))
        for job_task_id in edits:
            await self.finish_task(job_task_id, Outcome.success, None)


def step_name(step: str, number: int) -> str:
    """The loop's name for the step, as runs and errors record it."""
    if step == "instruction":
        return "generate_prompt" if number == 1 else "update_prompt"
    return {"edit": "edit_image", "judge": "verify_image"}[step]


def _last_wave(engine: Engine, job_id: int) -> int:
    with Session(engine) as session:
        waves = session.scalars(select(col(JobBatch.wave)).where(col(JobBatch.job_id) == job_id)
                                .order_by(col(JobBatch.wave).desc()).limit(1)).all()
        return waves[0] if waves else 0


def _records(engine: Engine, job_id: int, wave: int, step: str) -> list[JobBatch]:
    with Session(engine) as session:
        return list(session.scalars(select(JobBatch).where(
            col(JobBatch.job_id) == job_id, col(JobBatch.wave) == wave,
            col(JobBatch.step) == step).order_by(col(JobBatch.part))).all())


def _record(engine: Engine, lease: Lease, wave: int, step: str, part: int, model: str,
            keys: list[str]) -> JobBatch:
    """The batch, recorded before it is submitted: a restart looks it up by this name."""
    display = f"medbanana-job{lease.job_id}-wave{wave}-{step}-{part}-{secrets.token_hex(4)}"
    with Session(engine) as session:
        lease.hold(session)
        record = JobBatch(job_id=lease.job_id, wave=wave, step=step, part=part, model=model,
                          display_name=display, state=SUBMITTING, keys=json.dumps(keys))
        session.add(record)
        session.commit()
        session.refresh(record)
        return record


def _update(engine: Engine, lease: Lease, record: JobBatch) -> None:
    with Session(engine) as session:
        lease.hold(session)
        session.execute(update(JobBatch).where(col(JobBatch.id) == record.id).values(
            name=record.name, state=record.state, updated_at=utcnow()))
        session.commit()


def _mark_applied(session: Session, *, job_id: int, wave: int) -> None:
    session.execute(update(JobBatch).where(
        col(JobBatch.job_id) == job_id, col(JobBatch.wave) == wave,
        col(JobBatch.step) == "judge").values(state=APPLIED, updated_at=utcnow()))


def _open_tasks(engine: Engine, job_id: int) -> list[int]:
    with Session(engine) as session:
        return [i for i in session.scalars(select(col(JobTask.id)).where(
            col(JobTask.job_id) == job_id, col(JobTask.status) != "done")
            .order_by(col(JobTask.id))).all() if i is not None]


def _job_task(engine: Engine, job_task_id: int) -> JobTask:
    with Session(engine) as session:
        job_task = session.get(JobTask, job_task_id)
        assert job_task is not None
        return job_task


def _task_info(engine: Engine, task_id: int) -> tuple[TaskInfo, bytes]:
    with Session(engine) as session:
        return store.task_info(session, task_id)


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

