"""The pace test: steady readers flagged at its rate at most, over seeds its threshold never
saw; a reader who starts clicking through flagged soon after."""

import numpy as np

from app.readers.pace import SPREAD, pace

READS = 120


def _times(rng: np.random.Generator, reads: int, scale: float = 1.0) -> list[int]:
    logs = np.log(30_000 * scale) + SPREAD * rng.standard_t(4, reads) / np.sqrt(2)
    return [int(t) for t in np.exp(logs)]


def test_steady_readers_are_flagged_at_the_stated_rate_at_most() -> None:
    rng = np.random.default_rng(2027)
    flagged = [pace(_times(rng, READS), READS, alpha=0.05).flagged_at is not None
               for _ in range(300)]
    assert np.mean(flagged) <= 0.05 + 0.03  # the rate, and the simulation's own error


def test_a_reader_who_goes_three_times_faster_is_flagged_within_twenty_reads() -> None:
    rng = np.random.default_rng(8)
    caught = []
    for _ in range(100):
        at = pace(_times(rng, 60) + _times(rng, 60, scale=1 / 3), READS, alpha=0.01).flagged_at
        caught.append(at is not None and 60 < at <= 80)
    assert np.mean(caught) >= 0.9


def test_a_coffee_break_is_not_a_slow_read_and_a_glance_not_a_drift() -> None:
    """Times are clipped to 1 s - 10 min: one hour-long read, then one 0.2 s read, flag nothing."""
    rng = np.random.default_rng(9)
    times = [*_times(rng, 40), 3_600_000, 200, *_times(rng, 40)]
    assert pace(times, READS, alpha=0.01).flagged_at is None
