"""Re-judging: the judge again, N times, on a task's latest edit, for self-consistency.

The new verdicts join the attempt's earlier ones; no run and no attempt is added. The
agreement pages compare them with the first verdict (app/agreement/consistency.py).
"""

import asyncio
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.jobs import store
from app.jobs.lease import Lease, hold
from app.jobs.rate_limit import CallLimiter
from app.models import Attempt, Task
from pipeline.backend import Backend, Verdict
from pipeline.loop import RetryPolicy, StepFailed, call_gate, unreadable, with_retries


def latest_edit(engine: Engine, task_id: int) -> tuple[Any, bytes, int, str, bytes]:
    with Session(engine) as session:
        info, original = store.task_info(session, task_id)
        task = session.get(Task, task_id)
        assert task is not None
        attempt_id = task.accepted_attempt_id or task.thumb_attempt_id
        if attempt_id is None:
            raise LookupError(f"task {task.task_key} has no edited image to judge")
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        try:
            edited = resolve_image(session, ImageKind.attempt, attempt_id).read_bytes()
        except ImageNotFound as error:
            raise LookupError(f"task {task.task_key}: the edited image is missing ({error})") from None
        return info, original, attempt_id, attempt.instruction or "", edited


def store_verdicts(engine: Engine, lease: Lease | None, verdicts: list[tuple[int, Verdict]],
                   also: Callable[[Session], None] = lambda _: None,
                   candidate_id: int | None = None) -> None:
    """Verdicts on attempts, and ``also`` (a batch pass marking itself done), in one
    transaction."""
    with Session(engine) as session:
        hold(session, lease)
        for attempt_id, verdict in verdicts:
            session.add(store.verdict_row(attempt_id, verdict.fields, unreadable(verdict),
                                          thinking=verdict.thinking, model=verdict.call.model,
                                          prompt_version=verdict.prompt.version, raw=verdict.raw,
                                          candidate_id=candidate_id))
        also(session)
        session.commit()


async def rejudge_task(engine: Engine, backend: Backend, task_id: int, times: int,
                       policy: RetryPolicy, limiter: CallLimiter | None = None,
                       lease: Lease | None = None, candidate_id: int | None = None) -> str | None:
    """Judge the task's latest edit ``times`` more times; an error text if it could not."""
    try:
        info, original, attempt_id, instruction, edited = await asyncio.to_thread(
            latest_edit, engine, task_id)
    except LookupError as error:
        return str(error)
    for _ in range(times):
        try:
            verdict = await with_retries(
                "verify_image", lambda: backend.judge(info, original, edited, instruction),
                policy, unreadable, gate=call_gate(limiter, backend, "verify_image"))
        except StepFailed as failure:
            return str(failure)
        await asyncio.to_thread(store_verdicts, engine, lease, [(attempt_id, verdict)],
                                candidate_id=candidate_id)
    return None
