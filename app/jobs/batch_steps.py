"""One step of a batch wave: its calls submitted as batches (or found again), polled until
they end, and each member's answer read, or made up with an interactive call."""

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from app.job_models import JobBatch
from app.jobs import batch_records, store
from app.jobs.batch_records import APPLIED
from app.jobs.lease import Lease
from app.jobs.rate_limit import CallLimiter
from pipeline.backend import BackendError, TaskInfo
from pipeline.estimate import STEP_TOKENS
from pipeline.gemini import GeminiBackend, Request
from pipeline.gemini_batch import ENDED, SUCCEEDED, Answer, Batches, fingerprint, model_of, parts
from pipeline.loop import (
    CancelledWhileWaiting,
    RetryPolicy,
    StepBlocked,
    StepFailed,
    call_gate,
    end_on,
    with_retries,
)
from pipeline.ports import Gate
from pipeline.vocabulary import JUDGE_STEP, Outcome

logger = logging.getLogger(__name__)
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
class BatchSteps:
    engine: Engine
    lease: Lease
    backend: GeminiBackend
    policy: RetryPolicy
    limiter: CallLimiter
    cancel: threading.Event
    finish_task: FinishTask
    poll_seconds: float
    root_id: int = 0
    root: str | Path = ""

    def __post_init__(self) -> None:
        self.batches = Batches(self.backend)

    @property
    def runs(self) -> store.RunRounds:
        """The job's runs, every write holding its lease."""
        return store.RunRounds(self.engine, self.root_id, self.root, self.lease)

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
                await self.finish_task(member.job_task_id,
                                       await end_on(self.runs, member.run_id, failure), None)
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
                                  gate=self._gate(name, request))

    def _gate(self, name: str, request: Request) -> Gate | None:
        """The quota a call goes through: its own model's (a candidate judge's), else the
        step's."""
        if request.model:
            return self.limiter.gate(request.model, STEP_TOKENS[name])
        return call_gate(self.limiter, self.backend, name)

    async def _answers(self, wave: int, step: str, members: list[Member],
                       requests: list[Request]) -> dict[str, Answer]:
        """Each member's answer from the wave's batches of this step: found again when they
        were submitted before, else submitted now; polled until they end."""
        keys = [m.key for m in members]
        carried = {key: fingerprint(request) for key, request in zip(keys, requests, strict=True)}
        records = await asyncio.to_thread(batch_records.records, self.engine,
                                          self.lease.job_id, wave, step)
        if not records:
            records = [await asyncio.to_thread(
                batch_records.record, self.engine, self.lease, wave, step, part,
                model_of(self.backend, step, requests), [keys[i] for i in indexes], carried)
                for part, indexes in enumerate(parts(requests))]
        by_key = dict(zip(keys, requests, strict=True))
        answers: dict[str, Answer] = {}
        for record in records:
            if record.state == APPLIED:
                continue
            if record.name is None:
                await self._submit(record, step, by_key, carried)
            sent = json.loads(record.carried or "{}")
            for key, answer in (await self._wait(record)).items():
                if key in carried and sent.get(key) == carried[key]:
                    answers[key] = answer
                elif key in carried:
                    # A restart made this member's input again (an edit the batch could not
                    # give): the answer is about other bytes, so it is dropped and the step
                    # asked again with what the member holds now.
                    logger.warning("job %s: %s's %s answer for %s was about inputs that were "
                                   "since made again; dropped and asked again", self.lease.job_id,
                                   record.name, step, key)
        return answers

    async def _submit(self, record: JobBatch, step: str, by_key: dict[str, Request],
                      carried: dict[str, str]) -> None:
        found = await self._retrying("find_batch", partial(self.batches.find, record.display_name))
        if found is None:
            keys = [k for k in json.loads(record.keys) if k in by_key]
            # Submitted now, by this worker: what it carries is what it holds now.
            record.carried = json.dumps({k: carried[k] for k in keys})
            found = await self._retrying("submit_batch", partial(
                self.batches.submit, step, [by_key[k] for k in keys], keys, record.display_name))
            logger.info("job %s: submitted %s (%d %s calls)", self.lease.job_id, found[0],
                        len(keys), step)
        record.name, record.state = found
        await asyncio.to_thread(batch_records.update_record, self.engine, self.lease, record)

    async def _wait(self, record: JobBatch) -> dict[str, Answer]:
        assert record.name is not None
        while True:
            state, answers = await self._retrying("poll_batch", partial(self.batches.poll,
                                                                        record.name))
            if state != record.state:
                record.state = state
                await asyncio.to_thread(batch_records.update_record, self.engine, self.lease, record)
            if state in ENDED:
                if state != SUCCEEDED:
                    logger.warning("job %s: %s ended %s; its calls are made interactively",
                                   self.lease.job_id, record.name, state)
                return answers or {}
            if self.cancel.is_set():
                # The job was cancelled: the batch is cancelled too, so that it is not billed
                # for answers nobody will store.
                try:
                    await self.batches.cancel(record.name)
                    logger.info("job %s cancelled: %s cancelled", self.lease.job_id, record.name)
                except BackendError as error:
                    logger.warning("job %s cancelled, but %s could not be: %s",
                                   self.lease.job_id, record.name, error)
                raise CancelledWhileWaiting()
            await asyncio.sleep(self.poll_seconds)

    async def _retrying(self, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await with_retries(name, call, self.policy, cancelled=self.cancel.is_set)
        except StepFailed as failure:
            # The Batch API itself is failing: nothing can go on until it answers again.
            raise BackendError(str(failure)) from None


def step_name(step: str, number: int) -> str:
    """The loop's name for the step, as runs and errors record it."""
    if step == "instruction":
        return "generate_prompt" if number == 1 else "update_prompt"
    return {"edit": "edit_image", "judge": JUDGE_STEP}[step]
