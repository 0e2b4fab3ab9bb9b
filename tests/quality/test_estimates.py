"""A part's row is the row of the part taken on its own: the estimators find a part's read
edits among the frame's read ones, and share what they take across the parts of a report."""

import numpy as np
import pytest

from app.quality.estimates import MIN_READS, Columns, Taken, _read_at, estimates

QUESTIONS = ("overall", "realism")


def frame(seed: int, size: int = 3000, read: float = 0.05) -> dict[str, Columns]:
    """Columns of a frame where a few edits are read and the judge left some unanswered."""
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, size // 3, size)
    strata = rng.integers(0, 4, size)
    weights = rng.uniform(1.0, 20.0, size)
    found = {}
    for question in QUESTIONS:
        judge = rng.integers(0, 2, size).astype(float)
        judge[rng.random(size) < 0.1] = np.nan
        consensus = np.where(rng.random(size) < 0.8, judge, 1 - judge)
        consensus[rng.random(size) >= read] = np.nan
        found[question] = Columns(judge, consensus, weights, clusters, strata)
    return found


def alone(columns: dict[str, Columns], index: np.ndarray) -> dict[str, Columns]:
    """The part as a frame of its own."""
    return {q: Columns(c.judge[index], c.consensus[index], c.weights[index], c.clusters[index],
                       c.strata[index]) for q, c in columns.items()}


@pytest.mark.parametrize("order", ["ascending", "shuffled"])
def test_the_read_edits_of_a_part_are_found_in_its_order(order: str) -> None:
    rng = np.random.default_rng(7)
    consensus = frame(1)["overall"].consensus
    for size in (0, 1, 5, 200, 3000):
        index = np.sort(rng.choice(len(consensus), size, replace=False))
        if order == "shuffled":
            rng.shuffle(index)
        expected = index[~np.isnan(consensus[index])]
        assert np.array_equal(_read_at({}, consensus, index), expected)
    none_read = np.flatnonzero(np.isnan(consensus))[:50]
    assert len(_read_at({}, consensus, none_read)) == 0


def test_each_part_estimated_with_the_report_s_shared_takings_is_the_part_on_its_own() -> None:
    columns = frame(3)
    strata = columns["overall"].strata
    taken: Taken = {}
    everything = np.arange(len(strata))
    parts = [everything] + [np.flatnonzero(strata == s) for s in range(4)]
    for index in parts:
        shared = estimates(columns, index, target=0.05, taken=taken)
        own = estimates(alone(columns, index), np.arange(len(index)), target=0.05)
        assert shared == own
        assert shared["overall"].reads == int((~np.isnan(columns["overall"].consensus[index])).sum())
        # An interval only from MIN_READS edits read (12 read edits gave 96.0 % (93.9-98.1),
        # marked "enough").
        if shared["overall"].reads >= MIN_READS:
            assert shared["overall"].ppi is not None
        else:
            assert shared["overall"].ppi is None and "no estimate" in (shared["overall"].reason or "")


def test_twelve_read_edits_give_no_interval_and_no_enough() -> None:
    """/quality showed structure 96.0 % (93.9-98.1) from 12 edits read, and called that
    enough: a normal interval of a share does not rest on twelve edits."""
    columns = frame(3)
    read = np.flatnonzero(~np.isnan(columns["overall"].consensus))
    index = np.sort(np.concatenate([read[:12], np.flatnonzero(np.isnan(columns["overall"].consensus))[:300]]))
    row = estimates(columns, index, target=0.05)["overall"]
    assert row.reads == 12 and row.ppi is None and row.readers is None
    assert row.plan is not None and row.plan.more >= MIN_READS - 12
    assert f"it needs {MIN_READS} edits" in (row.reason or "")
