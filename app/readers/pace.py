"""A sequential test for a drop in a reader's time per case: a reader who starts clicking
through.

Self-starting like the accuracy test (app/readers/drift.py): before each read, the reader's
usual pace is the mean and standard deviation of the log of their times on every read so far
except the last GUARD; the read's time is standardised by them, z, and
S = max(0, S - z - K) accumulates reads faster than usual. K is half the standardised size of
a halving of time at a typical spread of log times (SPREAD). The reader is flagged when S
reaches h, set by simulation of this very procedure on steady readers whose log times have
heavy tails (Student t, 4 degrees of freedom: a long look at a hard case, a short one at an
easy one), for a false-alarm rate of ALPHA over the reader's whole list. Times are clipped to
1 s - 10 min first: a coffee break is not a slow read.
"""

import functools
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
GUARD = 10
MIN_BASELINE = 10  # reads behind the baseline before any read is judged
SPREAD = 0.6  # a typical standard deviation of log time per case
K = np.log(2) / SPREAD / 2
RUNS = 2000
MOST = 2000  # horizons beyond this are calibrated at it (h grows very slowly with it)
CLIP_MS = (1_000, 600_000)


@dataclass(frozen=True)
class Pace:
    statistic: np.ndarray
    threshold: float

    @property
    def flagged_at(self) -> int | None:
        over = np.nonzero(self.statistic >= self.threshold)[0]
        return int(over[0]) + 1 if len(over) else None


def _statistic(log_times: np.ndarray) -> np.ndarray:
    """S after each read, for runs x reads of log times at once."""
    runs, reads = log_times.shape
    total = np.concatenate([np.zeros((runs, 1)), np.cumsum(log_times, axis=1)], axis=1)
    squares = np.concatenate([np.zeros((runs, 1)), np.cumsum(log_times ** 2, axis=1)], axis=1)
    s = np.zeros(runs)
    found = np.zeros((runs, reads))
    for t in range(reads):
        upto = t - GUARD
        if upto >= MIN_BASELINE:
            mean = total[:, upto] / upto
            sd = np.sqrt(np.maximum(squares[:, upto] / upto - mean ** 2, 1e-6) * upto / (upto - 1))
            z = (log_times[:, t] - mean) / sd
            s = np.maximum(0.0, s - z - K)
        found[:, t] = s
    return found


@functools.lru_cache(maxsize=64)
def threshold(horizon: int, alpha: float = ALPHA, seed: int = 0) -> float:
    reads = max(MIN_BASELINE + GUARD + 1, min(horizon, MOST))
    rng = np.random.default_rng(seed)
    steady = np.log(30.0) + SPREAD * rng.standard_t(4, (RUNS, reads)) / np.sqrt(2)
    return float(np.quantile(_statistic(steady).max(axis=1), 1 - alpha))


def pace(times_ms: list[int], horizon: int, alpha: float = ALPHA) -> Pace:
    """The test over a reader's times so far, in their order; ``horizon``: the reads in
    their list (what the false-alarm rate is stated over)."""
    clipped = np.clip(np.asarray(times_ms, float), *CLIP_MS)
    return Pace(_statistic(np.log(clipped)[None, :])[0], threshold(horizon, alpha))
