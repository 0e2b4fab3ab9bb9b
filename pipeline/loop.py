"""The refinement loop for one task, as the paper runs it, made durable.

Round 1 writes an instruction and edits the original; each later round writes a better
instruction from the full history (and, if asked, the readers' answers on an earlier run)
and edits the original again. The loop stops at the first qualified verdict. Faults are
retried with exponential back-off and jitter (a 429's Retry-After wins); an edit with no
image or an unreadable judge answer is a fault too, and if it persists the round is stored
with its error and the loop goes on. When retries run out on a call, the run is api_failed
with its step and error, and the rounds done so far are kept.
"""

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from pipeline.backend import Backend, BackendError, Edit, Instruction, Verdict, tokens_used
from pipeline.estimate import STEP_MODELS, STEP_TOKENS
from pipeline.judge_spec import TemplateProblem
from pipeline.ports import Gate, Quota, Round, Rounds, calls_record
from pipeline.vocabulary import JUDGE_STEP, Outcome, exhausted

T = TypeVar("T")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_seconds: float = 1.0
    cap_seconds: float = 60.0
    # The longest single wait on a used-up quota; the call waits again after it, as often
    # as needed (a per-day quota can take hours), and is never failed for it.
    quota_cap_seconds: float = 600.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        # Full jitter: spreads the retries of many concurrent tasks apart.
        return random.uniform(0, min(self.cap_seconds, self.base_seconds * 2**attempt))

    def quota_delay(self, waits: int, retry_after: float | None) -> float:
        """At least what the service asked for, plus up to a fifth more so that the tasks it
        turned away together do not all come back in the same second."""
        base = retry_after if retry_after is not None else self.base_seconds * 2 ** min(waits, 10)
        return min(self.quota_cap_seconds, base) * random.uniform(1.0, 1.2)


class StepFailed(Exception):
    def __init__(self, step: str, error: str) -> None:
        super().__init__(f"{step}: {error}")
        self.step, self.error = step, error


class StepBlocked(StepFailed):
    """The API refused the request or its answer (a safety or content block)."""


class CancelledWhileWaiting(Exception):
    """The job was cancelled while a call waited for quota: the run stays open, as after a
    cancel between rounds."""


class Unusable(Exception):
    """A call answered, but not usably (no image, unreadable verdict): retried as a fault."""

    def __init__(self, result: Any, error: str) -> None:
        super().__init__(error)
        self.result, self.error = result, error


async def with_retries(step: str, call: Callable[[], Awaitable[T]], policy: RetryPolicy,
                       check: Callable[[T], str | None] = lambda _: None,
                       cancelled: Callable[[], bool] = lambda: False,
                       gate: Gate | None = None) -> T:
    """The call's result; after the last try an unusable result is returned as it is (the
    caller records it), and a failing call raises StepFailed."""
    last: BaseException | None = None
    attempt = waits = 0
    while attempt < policy.attempts:
        # Every try is a call the quota counts, retries included.
        ticket = await gate.enter() if gate is not None else None
        try:
            result = await call()
        except asyncio.CancelledError:
            # The job stopped mid-call: the call may have arrived, so the quota counts it
            # from now (rather than holding its place as in flight until that runs out).
            if gate is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(gate.used(ticket, None))
            raise
        except TemplateProblem as unrendered:
            # The prompt could not be had, so no call was made: its place in the quota is given
            # back at once (held as in flight, it blocked the model's every job for 6 minutes),
            # and asking again renders the same template.
            if gate is not None:
                await gate.release(ticket)
            raise StepFailed(step, str(unrendered)) from None
        except BackendError as error:
            last = error
            if gate is not None:  # a refused call used no tokens; a failed one, unknown
                await gate.used(ticket, 0 if error.quota else None)
            if error.blocked:  # the same request gets the same refusal: never retried
                raise StepBlocked(step, str(error)) from None
            if error.quota:  # waits for the quota, however long; attempts are not used up
                delay = policy.quota_delay(waits, error.retry_after)
                waits += 1
                logger.info("%s: quota used up; waiting %.1f s (%d waits so far)", step, delay,
                            waits)
                if gate is not None:
                    await gate.waiting(delay)
                await _wait(delay, cancelled)
                continue
            attempt += 1
            if not error.retryable:
                break
            if attempt < policy.attempts:
                await asyncio.sleep(policy.delay(attempt - 1, error.retry_after))
            continue
        if gate is not None:
            await gate.used(ticket, tokens_used(result))
        attempt += 1
        problem = check(result)
        if problem is None or attempt == policy.attempts:
            return result
        last = Unusable(result, problem)
        await asyncio.sleep(policy.delay(attempt - 1, None))
    raise StepFailed(step, str(last))


async def _wait(seconds: float, cancelled: Callable[[], bool]) -> None:
    """Sleep, looking for a cancel every second: quota waits can be long."""
    remaining = seconds
    while remaining > 0:
        if cancelled():
            raise CancelledWhileWaiting()
        await asyncio.sleep(min(1.0, remaining))
        remaining -= 1.0


def no_image(edit: Edit) -> str | None:
    return None if edit.image is not None else (edit.error or "the edit returned no image")


def unreadable(verdict: Verdict) -> str | None:
    return None if verdict.fields is not None else (verdict.error or "unreadable verdict")


@dataclass(frozen=True)
class Options:
    rounds: int = 5
    policy: RetryPolicy = RetryPolicy()
    # Each model's quota, shared with every other job and worker (None: no quota kept).
    quota: Quota | None = None


def call_gate(quota: Quota | None, backend: Backend, step: str) -> Gate | None:
    """What each call of a step goes through: the quota of the model it calls."""
    if quota is None:
        return None
    models: dict[str, str] = getattr(backend, "models", {})
    return quota.gate(models.get(STEP_MODELS[step], backend.name), STEP_TOKENS[step])


async def regenerate(rounds: Rounds, backend: Backend, task_id: int, options: Options, *,
                     run_id: int | None = None,
                     feedback: list[dict[str, Any]] | None = None,
                     cancelled: Callable[[], bool] = lambda: False,
                     on_run: Callable[[int], Awaitable[None]] | None = None) -> tuple[int, Outcome | None]:
    """Run (or resume) one task's refinement; returns the run and its outcome, or None for
    the outcome when it was cancelled between rounds (the run stays open to resume)."""
    try:
        task, original = await asyncio.to_thread(rounds.task, task_id)
    except LookupError as error:  # the original image is gone: nothing can be asked
        if run_id is not None and await asyncio.to_thread(rounds.outcome,
                                                          run_id) is Outcome.running:
            # A job made the run before this was known; it must end, not stay "running".
            await asyncio.to_thread(partial(
                rounds.finish_run, run_id, Outcome.api_failed,
                failure_step="read_original", failure_error=str(error)))
        raise
    if run_id is None:
        run_id = await asyncio.to_thread(rounds.start_run, task_id)
        if on_run is not None:
            await on_run(run_id)
    finished = await asyncio.to_thread(rounds.outcome, run_id)
    if finished is not Outcome.running:
        # Killed after the run ended but before its job counted it: nothing more to do.
        return run_id, finished if finished.ended_by_the_loop else None
    history = await asyncio.to_thread(rounds.history, run_id)
    if history and history[-1]["verdict"].get("qualified") is True:
        # Killed between storing the accepted round and ending the run: the run ends there,
        # rather than editing on past an edit the judge already accepted.
        number = int(history[-1]["round"])
        await asyncio.to_thread(partial(rounds.finish_run, run_id, Outcome.success,
                                        success_round=number))
        return run_id, Outcome.success
    for number in range(len(history) + 1, options.rounds + 1):
        if cancelled():
            return run_id, None
        try:
            instruction = await with_retries(
                "generate_prompt" if number == 1 else "update_prompt",
                partial(backend.instruction, task, original, history, feedback or []),
                options.policy, cancelled=cancelled,
                gate=call_gate(options.quota, backend, "generate_prompt"))
            edit = await with_retries("edit_image", partial(backend.edit, task, original,
                                                            instruction.text),
                                      options.policy, no_image, cancelled=cancelled,
                                      gate=call_gate(options.quota, backend, "edit_image"))
        except CancelledWhileWaiting:
            return run_id, None
        except StepFailed as failure:
            return run_id, await end_on(rounds, run_id, failure)
        # The judge on its own: when its calls fail, the finished edit is kept (stored with
        # no verdict, to be judged later by a re-judge) and only the run ends.
        verdict, judge_failure = None, None
        if edit.image is not None:
            try:
                verdict = await with_retries(
                    JUDGE_STEP, partial(backend.judge, task, original, edit.image,
                                            instruction.text),
                    options.policy, unreadable, cancelled=cancelled,
                    gate=call_gate(options.quota, backend, JUDGE_STEP))
            except CancelledWhileWaiting:
                return run_id, None
            except StepFailed as failure:
                judge_failure = failure
        item = round_record(backend, number, instruction, edit, verdict)
        await asyncio.to_thread(rounds.save_round, run_id, item)
        if judge_failure is not None:
            return run_id, await end_on(rounds, run_id, judge_failure)
        history = await asyncio.to_thread(rounds.history, run_id)
        if verdict is not None and verdict.fields and verdict.fields.get("qualified"):
            await asyncio.to_thread(partial(rounds.finish_run, run_id, Outcome.success,
                                            success_round=number))
            return run_id, Outcome.success
    history = await asyncio.to_thread(rounds.history, run_id)
    outcome = exhausted(any(judged(item) for item in history))
    await asyncio.to_thread(rounds.finish_run, run_id, outcome)
    return run_id, outcome


def judged(item: dict[str, Any]) -> bool:
    """Whether a stored round (as ``Rounds.history`` gives it) has a verdict the judge gave."""
    return isinstance(item.get("verdict"), dict) and item["verdict"].get("qualified") is not None


async def end_on(rounds: Rounds, run_id: int, failure: StepFailed) -> Outcome:
    """End the run on a step that failed: blocked when the API refused, else api_failed."""
    outcome = Outcome.blocked if isinstance(failure, StepBlocked) else Outcome.api_failed
    await asyncio.to_thread(partial(rounds.finish_run, run_id, outcome,
                                    failure_step=failure.step, failure_error=failure.error))
    return outcome


def round_record(backend: Backend, number: int, instruction: Instruction, edit: Edit,
                 verdict: Verdict | None, mode: str = "interactive") -> Round:
    """A round's results as stored, from interactive calls or a batch alike."""
    calls = {"instruction": instruction.call, "edit": edit.call}
    if verdict is not None:
        calls["judge"] = verdict.call
    return Round(
        number=number, instruction=instruction.text, instruction_thinking=instruction.thinking,
        image=edit.image, edit_error=no_image(edit),
        verdict=verdict.fields if verdict else None,
        verdict_error=unreadable(verdict) if verdict else None,
        judge_thinking=verdict.thinking if verdict else "",
        judge_model=verdict.call.model if verdict else None,
        prompt_version=verdict.prompt.version if verdict else None,
        raw=verdict.raw if verdict else "",
        calls=calls_record(backend.name, backend.label, **calls)
        | {"instruction_prompt": instruction.prompt.version, "mode": mode})
