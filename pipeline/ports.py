"""What the engine needs from the app, as a small typed interface: read a task, keep a run's
rounds, pass each call through the quota.

The engine defines these and the app implements them (app/jobs/store.py keeps rounds in the
database, app/jobs/rate_limit.py counts calls there), so the pipeline imports nothing of the
app and can be run against any store that keeps these promises.
"""

from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.backend import Call, TaskInfo
from pipeline.vocabulary import Outcome


@dataclass(frozen=True)
class Round:
    """What one round produced, ready to store."""

    number: int
    instruction: str
    instruction_thinking: str
    image: bytes | None
    edit_error: str | None
    verdict: dict[str, Any] | None  # fields, or None when there is no verdict
    verdict_error: str | None
    judge_thinking: str
    judge_model: str | None
    prompt_version: str | None
    raw: str
    calls: dict[str, Any]


class Rounds(Protocol):
    """Where a task's runs are kept. Every method blocks (the loop calls them in a thread)
    and each write is whole or absent: a round is never half stored."""

    def task(self, task_id: int) -> tuple[TaskInfo, bytes]:
        """The task as the backend sees it and its original image's bytes; LookupError when
        either is gone."""
        ...

    def start_run(self, task_id: int) -> int:
        """A new open run of the task (``Outcome.running``)."""
        ...

    def outcome(self, run_id: int) -> Outcome: ...

    def history(self, run_id: int) -> list[dict[str, Any]]:
        """The run's rounds so far, as the refinement prompt reads them."""
        ...

    def save_round(self, run_id: int, item: Round) -> int: ...

    def finish_run(self, run_id: int, outcome: Outcome, *, success_round: int | None = None,
                   failure_step: str | None = None, failure_error: str | None = None) -> None: ...


class Gate(Protocol):
    """One step's way through its model's quota."""

    async def enter(self) -> Any:
        """Returns when the call may go, with a ticket for ``used``."""
        ...

    async def used(self, ticket: Any, tokens: int | None) -> None:
        """What the call turned out to use (None: unknown, the expected tokens stand)."""
        ...

    async def waiting(self, seconds: float) -> None:
        """The service said the quota is used up; calls wait this long."""
        ...

    async def release(self, ticket: Any) -> None:
        """No call was made after all (its prompt could not be had): the place is given back."""
        ...


class Quota(Protocol):
    """Each model's quota, shared with whatever else calls it."""

    def gate(self, model: str, tokens: int) -> Gate: ...


def calls_record(backend: str, label: str, **calls: Call) -> dict[str, Any]:
    """A round's calls as stored with it: model, latency and tokens of each step."""
    return {"backend": backend, "label": label,
            **{step: {"model": c.model, "latency_ms": round(c.latency_ms, 1),
                      "input_tokens": c.input_tokens, "output_tokens": c.output_tokens,
                      "thinking_tokens": c.thinking_tokens, "model_version": c.model_version}
               for step, c in calls.items()}}
