"""The refinement loop on the demo data with the offline backend: runs, rounds, faults,
and a resumed run that repeats nothing."""

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.jobs import store
from app.models import Attempt, JudgeVerdict, Run, Task
from pipeline import loop
from pipeline.backend import BackendError, Edit, TaskInfo, Verdict
from pipeline.offline import OfflineBackend
from pipeline.vocabulary import Outcome
from tests import aio

FAST = loop.Options(rounds=5, policy=loop.RetryPolicy(attempts=3, base_seconds=0.0))


def a_task(engine: Engine, modality: str = "chest_xray") -> int:
    with Session(engine) as session:
        task = session.exec(select(Task).where(Task.modality == modality,
                                               Task.outcome == "success")).first()
        assert task is not None and task.id is not None
        return task.id


def go(engine: Engine, tmp_path: Path, backend: Any, task_id: int, options: loop.Options = FAST,
       **kw: Any) -> tuple[int, Outcome | None]:
    root = tmp_path / "pipeline"
    root_id = store.output_root(engine, root)
    rounds = store.RunRounds(engine, root_id, root.resolve())
    return aio.run(loop.regenerate(rounds, backend, task_id, options, **kw))


def test_a_regeneration_is_a_new_run_with_every_round(demo_engine: Engine, tmp_path: Path) -> None:
    task_id = a_task(demo_engine)
    run_id, outcome = go(demo_engine, tmp_path, OfflineBackend(), task_id)
    assert outcome is Outcome.success
    with Session(demo_engine) as session:
        runs = session.exec(select(Run).where(Run.task_id == task_id)).all()
        assert [r.origin for r in runs] == ["import", "regeneration"]
        task = session.get(Task, task_id)
        attempts = session.exec(select(Attempt).where(Attempt.run_id == run_id)).all()
        assert task is not None and task.latest_run_id == run_id
        assert task.accepted_attempt_id == attempts[-1].id
        for attempt in attempts:
            assert attempt.image_present and '"backend": "offline"' in (attempt.calls or "")
            verdict = session.exec(select(JudgeVerdict).where(JudgeVerdict.attempt_id == attempt.id)).one()
            assert verdict.model == "offline-heuristic-1" and verdict.prompt_version


class Crashing(OfflineBackend):
    """Dies (as a killed process would) when round 2's edit starts."""

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        if self.calls == 1:
            raise SystemExit("killed")
        self.calls += 1
        return await super().edit(task, original, instruction)

    calls = 0


class AlwaysFlawed(OfflineBackend):
    """Its edits always fail compliance, so every round is needed."""

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        return await super().edit(task, original, "")


def test_a_resumed_run_continues_from_its_next_round(demo_engine: Engine, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import offline

    monkeypatch.setattr(offline, "flaws_for", lambda *_: {"too_subtle"})
    task_id = a_task(demo_engine)
    started: list[int] = []

    async def remember(run_id: int) -> None:
        started.append(run_id)

    with pytest.raises(SystemExit):
        go(demo_engine, tmp_path, Crashing(), task_id, on_run=remember)
    [run_id] = started
    assert store.attempts_of(demo_engine, run_id) == 1
    _, outcome = go(demo_engine, tmp_path, AlwaysFlawed(), task_id, run_id=run_id)
    assert outcome is Outcome.failed
    with Session(demo_engine) as session:
        rounds = [a.round for a in session.exec(select(Attempt).where(Attempt.run_id == run_id))]
        run = session.get(Run, run_id)
    assert sorted(rounds) == [1, 2, 3, 4, 5] and run is not None and run.n_rounds == 5


class Failing(OfflineBackend):
    def __init__(self, after: int) -> None:
        self.after, self.edits = after, 0

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        self.edits += 1
        if self.edits > self.after:
            raise BackendError("503 UNAVAILABLE")
        return await super().edit(task, original, "")


def test_retries_run_out_into_api_failed_and_keep_the_rounds(demo_engine: Engine, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import offline

    monkeypatch.setattr(offline, "flaws_for", lambda *_: {"too_subtle"})
    task_id = a_task(demo_engine)
    backend = Failing(after=2)
    run_id, outcome = go(demo_engine, tmp_path, backend, task_id)
    assert outcome is Outcome.api_failed and backend.edits == 2 + FAST.policy.attempts
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
        task = session.get(Task, task_id)
    assert run is not None and run.failure_step == "edit_image" and "503" in (run.failure_error or "")
    assert run.n_rounds == 2 and task is not None and task.outcome == "api_failed"


class NoImage(OfflineBackend):
    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        edit = await super().edit(task, original, instruction)
        return replace(edit, image=None, error="No image in response")


def test_an_edit_without_an_image_is_recorded_not_fatal(demo_engine: Engine, tmp_path: Path) -> None:
    task_id = a_task(demo_engine)
    run_id, outcome = go(demo_engine, tmp_path, NoImage(), task_id,
                         loop.Options(rounds=2, policy=loop.RetryPolicy(attempts=2, base_seconds=0.0)))
    # The judge never saw an edit: the run is not one it rejected.
    assert outcome is Outcome.unjudged
    with Session(demo_engine) as session:
        attempts = session.exec(select(Attempt).where(Attempt.run_id == run_id)).all()
        task = session.get(Task, task_id)
    assert [a.edit_error for a in attempts] == ["No image in response"] * 2
    assert not any(a.image_present for a in attempts)
    assert task is not None and task.outcome == "unjudged"


class Unreadable(OfflineBackend):
    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict:
        verdict = await super().judge(task, original, edited, instruction)
        return replace(verdict, fields=None, error="JSON parse error: cut off")


def test_a_run_whose_verdicts_were_all_unreadable_is_unjudged(demo_engine: Engine,
                                                             tmp_path: Path) -> None:
    _run_id, outcome = go(demo_engine, tmp_path, Unreadable(), a_task(demo_engine),
                         loop.Options(rounds=2, policy=loop.RetryPolicy(attempts=1, base_seconds=0.0)))
    assert outcome is Outcome.unjudged


class RejectsThenUnreadable(OfflineBackend):
    def __init__(self) -> None:
        super().__init__()
        self.judged = 0

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict:
        verdict = await super().judge(task, original, edited, instruction)
        self.judged += 1
        if self.judged == 1:
            return replace(verdict, fields=(verdict.fields or {}) | {"qualified": False})
        return replace(verdict, fields=None, error="JSON parse error: cut off")


def test_a_run_with_one_rejected_round_is_failed(demo_engine: Engine, tmp_path: Path) -> None:
    _, outcome = go(demo_engine, tmp_path, RejectsThenUnreadable(), a_task(demo_engine),
                    loop.Options(rounds=2, policy=loop.RetryPolicy(attempts=1, base_seconds=0.0)))
    assert outcome is Outcome.failed


def test_retry_after_is_honoured() -> None:
    calls: list[float] = []

    async def flaky() -> str:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 1:
            raise BackendError("429 RESOURCE_EXHAUSTED", retry_after=0.2)
        return "ok"

    assert aio.run(loop.with_retries("edit_image", flaky, loop.RetryPolicy(base_seconds=0.0))) == "ok"
    assert calls[1] - calls[0] >= 0.19


def test_resuming_a_finished_run_adds_nothing(demo_engine: Engine, tmp_path: Path) -> None:
    """Killed between the run's end and its job's count: the resume must not go on."""
    task_id = a_task(demo_engine)
    run_id, outcome = go(demo_engine, tmp_path, OfflineBackend(), task_id,
                         loop.Options(rounds=5, policy=FAST.policy))
    before = store.attempts_of(demo_engine, run_id)
    again_id, again = go(demo_engine, tmp_path, OfflineBackend(), task_id, run_id=run_id)
    assert (again_id, again) == (run_id, outcome) and store.attempts_of(demo_engine, run_id) == before


class DiesBeforeTheEnd(store.RunRounds):
    """Killed after the accepted round was stored but before the run was marked ended."""

    def finish_run(self, run_id: int, outcome: Outcome, **kw: Any) -> None:
        raise SystemExit("killed")


def test_resuming_a_run_whose_last_round_was_accepted_ends_it_there(demo_engine: Engine,
                                                                     tmp_path: Path) -> None:
    """A worker that dies between storing the accepted round and ending the run must not
    leave the next worker to edit on past the accepted round (it did: a third round)."""
    task_id = a_task(demo_engine)
    root = tmp_path / "pipeline"
    root_id = store.output_root(demo_engine, root)
    started: list[int] = []

    async def remember(run_id: int) -> None:
        started.append(run_id)

    with pytest.raises(SystemExit):
        aio.run(loop.regenerate(DiesBeforeTheEnd(demo_engine, root_id, root.resolve()),
                                OfflineBackend(), task_id, FAST, on_run=remember))
    [run_id] = started
    stored = store.attempts_of(demo_engine, run_id)
    assert store.run_outcome(demo_engine, run_id) is Outcome.running

    class Counting(OfflineBackend):
        edits = 0

        async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
            self.edits += 1
            return await super().edit(task, original, instruction)

    backend = Counting()
    again_id, outcome = go(demo_engine, tmp_path, backend, task_id, run_id=run_id)
    assert (again_id, outcome) == (run_id, Outcome.success)
    assert backend.edits == 0 and store.attempts_of(demo_engine, run_id) == stored
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
        task = session.get(Task, task_id)
        last = session.exec(select(Attempt).where(Attempt.run_id == run_id, Attempt.round == stored)).one()
    assert run is not None and run.outcome == Outcome.success and run.n_rounds == stored
    assert task is not None and task.accepted_attempt_id == last.id


def test_facet_counts_follow_a_run_that_ends(client: Any, demo_engine: Engine) -> None:
    """A run is created when it starts and changes its task when it ends; the cached facet
    counts once missed the end."""
    from bs4 import BeautifulSoup

    def success_count() -> int:
        page = BeautifulSoup(client.get("/cases").text, "html.parser")
        link = page.select_one('.facet[data-facet="outcome"] a[data-value="success"] .count')
        return int(link.get_text())

    before = success_count()
    run_id = store.start_run(demo_engine, a_task(demo_engine))
    assert success_count() == before  # still running: the task keeps its outcome
    store.finish_run(demo_engine, run_id, Outcome.failed)
    assert success_count() == before - 1


def test_a_new_final_edit_drops_the_old_metrics_until_measured(demo_engine: Engine,
                                                              tmp_path: Path) -> None:
    """/cases sorts by the task's copy of its final edit's metrics: a regeneration that ends
    with a new edit must not keep showing the old edit's figures."""
    from sqlmodel import Session

    from app.images.metrics_store import compute_pending
    from app.models import Task

    while compute_pending(demo_engine, limit=500):
        pass
    task_id = a_task(demo_engine)
    with Session(demo_engine) as session:
        before = session.get(Task, task_id)
        assert before is not None and before.final_changed is not None
        old_thumb = before.thumb_attempt_id
    go(demo_engine, tmp_path, OfflineBackend(), task_id, loop.Options(rounds=1, policy=FAST.policy))
    with Session(demo_engine) as session:
        task = session.get(Task, task_id)
        assert task is not None and task.thumb_attempt_id != old_thumb
        assert task.final_changed is None and task.final_regions is None
    assert compute_pending(demo_engine) >= 1
    with Session(demo_engine) as session:
        assert session.get(Task, task_id).final_changed is not None  # type: ignore[union-attr]


def test_a_quota_wait_ends_when_the_job_is_cancelled() -> None:
    from pipeline.backend import BackendError

    calls = {"n": 0, "looked": 0}

    async def used_up() -> None:
        calls["n"] += 1
        raise BackendError("429 RESOURCE_EXHAUSTED", retry_after=30.0, quota=True)

    def cancelled_after_one_look() -> bool:
        calls["looked"] += 1
        return calls["looked"] > 1

    policy = loop.RetryPolicy(attempts=1)
    with pytest.raises(loop.CancelledWhileWaiting):
        aio.run(loop.with_retries("edit_image", used_up, policy,
                                  cancelled=cancelled_after_one_look))
    # The cancel was seen on the second look, a slice into the 30 s wait: the wait looks for
    # it as it goes, not once at its end, and the call was not made again.
    assert calls == {"n": 1, "looked": 2}
