"""A job's estimate from what this database knows: the selected tasks' own rounds, and the
means of the Gemini calls it has recorded (pipeline/estimate.py turns them into calls, time
and cost)."""

import json
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import case, func, select
from sqlmodel import Session, col

from app.models import Attempt, Run, Task
from pipeline.estimate import MIN_OBSERVED, OBSERVED_CALLS, ROLES, Estimate, Limits, Usage, estimate


def rounds_of(session: Session, task_ids: Iterable[int], rounds: int) -> tuple[float | None, str]:
    """The mean rounds the tasks' latest runs took (each capped at ``rounds``), or None when
    none of them has a run with rounds."""
    ids = list(task_ids)
    total = known = 0.0
    for start in range(0, len(ids), 10_000):
        chunk = ids[start:start + 10_000]
        capped = case((col(Task.n_rounds) > rounds, rounds), else_=col(Task.n_rounds))
        row = session.execute(select(func.count(), func.sum(capped))
                              .where(col(Task.id).in_(chunk), col(Task.n_rounds) > 0)).one()
        known += row[0] or 0
        total += row[1] or 0
    if not known:
        return None, ""
    return total / known, f"the {int(known):,} selected tasks' latest runs"


def observed_usage(session: Session) -> tuple[dict[str, Usage] | None, str]:
    """Mean tokens and latency per role over the newest recorded Gemini calls."""
    rows = session.scalars(
        select(col(Attempt.calls)).join(Run, col(Run.id) == Attempt.run_id)
        .where(col(Run.origin) == "regeneration", col(Attempt.calls).is_not(None))
        .order_by(col(Attempt.id).desc()).limit(OBSERVED_CALLS)).all()
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for text in rows:
        try:
            record = json.loads(text or "{}")
        except ValueError:
            continue
        if record.get("backend") != "gemini":
            continue
        for role in ROLES:
            call = record.get(role)
            if not isinstance(call, dict) or call.get("input_tokens") is None:
                continue
            entry = sums[role]
            entry[0] += 1
            entry[1] += call["input_tokens"]
            entry[2] += (call.get("output_tokens") or 0) + (call.get("thinking_tokens") or 0)
            entry[3] += (call.get("latency_ms") or 0) / 1000
    if any(sums[role][0] < MIN_OBSERVED for role in ROLES):
        return None, ""
    usage = {role: Usage(round(s[1] / s[0]), round(s[2] / s[0]), s[3] / s[0])
             for role, s in sums.items()}
    fewest = int(min(s[0] for s in sums.values()))
    return usage, f"the means of the {fewest:,}+ recorded Gemini calls per step"


def for_tasks(session: Session, task_ids: list[int], *, backend: str, kind: str, rounds: int,
              rejudge_times: int, models: dict[str, str], limits: Limits) -> Estimate:
    """The estimate for a job about to start on these tasks, from what this database knows."""
    if backend != "gemini":  # local backends call no service and cost nothing
        models = {role: f"{backend} (local)" for role in ROLES}
    expected, source = rounds_of(session, task_ids, rounds) if kind != "rejudge" else (None, "")
    usage, usage_source = observed_usage(session)
    return estimate(len(task_ids), kind=kind, rounds=rounds, rejudge_times=rejudge_times,
                    models=models, limits=limits, rounds_per_task=expected,
                    rounds_source=source, usage=usage, usage_source=usage_source)
