"""Estimates before a job starts: calls, tokens, wall time under the quota, and cost at list
prices, worked out by hand here from the typical usage and the price table."""

import pytest

from pipeline.estimate import Limits, describe, estimate
from pipeline.gemini import DEFAULT_MODELS


def hundred_tasks(**limits: int) -> object:
    return estimate(100, kind="regenerate", rounds=5, rejudge_times=3, models=DEFAULT_MODELS,
                    limits=Limits(concurrency=8, **limits), rounds_per_task=2.0)


def test_calls_tokens_and_cost_of_a_regeneration() -> None:
    est = hundred_tasks()
    pro, image = {m.model: m for m in est.models}["gemini-2.5-pro"], {
        m.model: m for m in est.models}["gemini-2.5-flash-image"]
    # 100 tasks x 2 rounds: the instruction and the judge on Pro, the edit on the image model.
    assert (pro.calls, image.calls, est.calls, est.most_calls) == (400, 200, 600, 1500)
    assert pro.input_tokens == 100 * 2 * (1_600 + 2_600)
    assert image.output_tokens == 100 * 2 * 1_290
    # Pro: 840k in at $1.25/M and 700k out at $10/M; image: 280k in at $0.30, 258k out at $30.
    assert est.cost == pytest.approx(1.05 + 7.00 + 0.084 + 7.74)
    assert est.batch_cost == pytest.approx((1.05 + 7.00 + 0.084 + 7.74) / 2)
    # 8 at a time, 2 x (20 + 12 + 25) s per task: 23.75 minutes.
    assert est.minutes == pytest.approx(100 * 114 / 60 / 8) and est.bound_by == "8 tasks at a time"


def test_the_slowest_quota_sets_the_wall_time() -> None:
    est = hundred_tasks(per_minute=10)
    assert est.minutes == pytest.approx(40.0)  # 400 Pro calls at 10 a minute
    assert est.bound_by == "10 calls a minute to gemini-2.5-pro"
    daily = hundred_tasks(per_day=150)
    assert daily.minutes == 2 * 1440  # 400 calls at 150 a day: two full days used up
    tokens = hundred_tasks(tokens_per_minute=50_000)  # Pro's 1.54 M tokens at 50k a minute
    assert tokens.minutes == pytest.approx((840_000 + 700_000) / 50_000)


def test_a_rejudge_is_judge_calls_only_and_unknown_models_are_not_priced() -> None:
    est = estimate(10, kind="rejudge", rounds=5, rejudge_times=4,
                   models={"judge": "my-tuned-judge"}, limits=Limits())
    assert [(m.model, m.calls) for m in est.models] == [("my-tuned-judge", 40)]
    assert est.cost is None and est.unpriced == ["my-tuned-judge"]
    assert "no list price" in "\n".join(describe(est))
