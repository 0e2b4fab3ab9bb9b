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
from collections.abc import Awaitable
from dataclasses import dataclass
from functools import partial
from typing import Any

from app.job_models import JobTaskStatus
from app.jobs import batch_records, store
from app.jobs.batch_records import APPLIED
from app.jobs.batch_steps import BatchSteps, Member
from app.jobs.feedback import reader_feedback
from app.jobs.rejudge import latest_edit, store_verdicts
from pipeline.backend import Edit, Instruction, Verdict
from pipeline.loop import StepFailed, end_on, judged, no_image, round_record, unreadable
from pipeline.vocabulary import Outcome, exhausted


@dataclass
class BatchRun(BatchSteps):
    rounds: int = 5
    rejudge_times: int = 3
    use_reader_feedback: bool = False

    # Regeneration: waves of rounds.

    async def regenerate(self) -> None:
        wave = max(1, await asyncio.to_thread(batch_records.last_wave, self.engine, self.lease.job_id))
        while not self.cancel.is_set():
            recorded = bool(await asyncio.to_thread(batch_records.records, self.engine, self.lease.job_id,
                                                    wave, "instruction"))
            members = await self._members(wave, recorded)
            if members:
                await self._round(wave, members)
            elif not recorded:
                return  # no open task is left
            wave += 1

    async def _members(self, wave: int, recorded: bool) -> list[Member]:
        if recorded:  # a wave begun before a restart: exactly the tasks and rounds it holds
            records = await asyncio.to_thread(batch_records.records, self.engine,
                                              self.lease.job_id, wave, "instruction")
            keys = [k for r in records for k in json.loads(r.keys)]
            wanted = [(int(a), int(b)) for a, b in (k.split(":") for k in keys)]
        else:
            wanted = [(t, 0) for t in await asyncio.to_thread(batch_records.open_tasks, self.engine,
                                                              self.lease.job_id)]
        members = []
        for job_task_id, number in wanted:
            member = await self._member(job_task_id, number)
            if member is not None:
                members.append(member)
        return members

    async def _member(self, job_task_id: int, number: int) -> Member | None:
        """The task ready for its round, or None when it has nothing more to do here."""
        job_task = await asyncio.to_thread(batch_records.job_task, self.engine, job_task_id)
        if job_task.status == JobTaskStatus.done:
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
            info, original = await asyncio.to_thread(store.task_info_of, self.engine, job_task.task_id)
        except LookupError as error:
            await end_on(self.runs, run_id, StepFailed("read_original", str(error)))
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
        if outcome is not Outcome.running:
            await self.finish_task(job_task_id, outcome if outcome.ended_by_the_loop else None,
                                   None)
            return True
        history = await asyncio.to_thread(store.rounds_done, self.engine, run_id)
        last = history[-1]["verdict"] if history else {}
        if last.get("qualified"):
            await self._finish(job_task_id, run_id, Outcome.success, len(history))
            return True
        if len(history) >= self.rounds:
            await self._finish(job_task_id, run_id, exhausted(any(judged(h) for h in history)))
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
                await self.finish_task(m.job_task_id, await end_on(self.runs, m.run_id, failure),
                                       None)
                continue
            await self._settled(m.job_task_id, m.run_id)
    # Re-judging: one wave per pass of the judge over every task's latest edit.

    async def rejudge(self) -> None:
        edits: dict[int, Any] = {}
        for job_task_id in await asyncio.to_thread(batch_records.open_tasks, self.engine, self.lease.job_id):
            job_task = await asyncio.to_thread(batch_records.job_task, self.engine, job_task_id)
            try:
                edits[job_task_id] = await asyncio.to_thread(latest_edit, self.engine,
                                                             job_task.task_id)
            except LookupError as error:
                await self.finish_task(job_task_id, None, str(error))
        for wave in range(1, self.rejudge_times + 1):
            if self.cancel.is_set():
                return
            records = await asyncio.to_thread(batch_records.records, self.engine, self.lease.job_id, wave,
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
                                    partial(batch_records.mark_applied, job_id=self.lease.job_id, wave=wave))
        for job_task_id in edits:
            await self.finish_task(job_task_id, Outcome.success, None)
