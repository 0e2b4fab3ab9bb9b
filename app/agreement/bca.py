"""The BCa interval of a bootstrap distribution, with its tail expanded for few clusters
(Efron 1987; Hesterberg 2015): the interval arithmetic behind app/agreement/resample.py,
which draws the resamples."""

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from scipy import special, stats

CONFIDENCE = 0.95


@lru_cache(maxsize=256)
def expanded_tail(clusters: int) -> float:
    """The lower tail probability of the expanded percentile interval for K clusters."""
    t = stats.t.ppf(1 - (1 - CONFIDENCE) / 2, clusters - 1)
    return float(special.ndtr(-np.sqrt(clusters / (clusters - 1)) * t))


def bca_interval(values: np.ndarray, estimate: float, jackknife: np.ndarray, resampled: int,
                 clusters: int) -> tuple[float, float]:
    """BCa limits at the tail expanded for the ``clusters`` that hold the figure's cases (the
    jackknife leaves out each of the ``resampled`` clusters); the expanded percentile limits
    where the bias correction or the acceleration is not finite (a resample distribution all
    on one side)."""
    # scipy.special's ufuncs: the same normal quantiles as scipy.stats.norm, without its
    # per-call overhead (a report computes thousands of intervals).
    z_tail = special.ndtri(expanded_tail(clusters))
    below = (np.sum(values < estimate) + 0.5 * np.sum(values == estimate)) / len(values)
    bias = special.ndtri(below) if 0 < below < 1 else np.nan
    spread = jackknife.mean() - jackknife if len(jackknife) == resampled else np.array([np.nan])
    with np.errstate(all="ignore"):
        acceleration = (spread**3).sum() / (6 * ((spread**2).sum()) ** 1.5)
    if not np.isfinite(acceleration) and np.allclose(spread, 0):
        acceleration = 0.0
    shares = [special.ndtr(z_tail), special.ndtr(-z_tail)]
    if np.isfinite(bias) and np.isfinite(acceleration):
        shares = [float(special.ndtr(bias + (bias + z) / (1 - acceleration * (bias + z))))
                  for z in (z_tail, -z_tail)]
    low, high = np.percentile(values, [100 * shares[0], 100 * shares[1]])
    return float(low), float(high)


def bca_intervals(values: np.ndarray, estimates: np.ndarray, jackknife: np.ndarray,
                  clusters: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``bca_interval`` of many figures at once, row by row, to the last bit: each row of
    ``values`` (its resamples) and of ``jackknife`` (every cluster left out) all finite."""
    z_tail = special.ndtri(np.array([expanded_tail(c) for c in clusters]))
    estimate = estimates[:, None]
    below = (np.count_nonzero(values < estimate, axis=1)
             + 0.5 * np.count_nonzero(values == estimate, axis=1)) / values.shape[1]
    with np.errstate(all="ignore"):
        bias = np.where((below > 0) & (below < 1), special.ndtri(below), np.nan)
        spread = jackknife.mean(axis=1, keepdims=True) - jackknife
        acceleration = (spread**3).sum(axis=1) / (6 * ((spread**2).sum(axis=1)) ** 1.5)
        level = ~np.isfinite(acceleration) & np.isclose(spread, 0).all(axis=1)
        acceleration = np.where(level, 0.0, acceleration)
        usable = np.isfinite(bias) & np.isfinite(acceleration)
        shares = [np.where(usable, special.ndtr(bias + (bias + z) / (1 - acceleration * (bias + z))),
                           special.ndtr(z)) for z in (z_tail, -z_tail)]
    ordered = np.sort(values, axis=1)
    return (row_percentiles(ordered, 100 * shares[0]),
            row_percentiles(ordered, 100 * shares[1]))


def row_percentiles(ordered: np.ndarray, percent: np.ndarray) -> np.ndarray:
    """Row i's ``percent[i]`` percentile of the sorted rows ``ordered``, by numpy's default
    ("linear", Hyndman & Fan's 7th) method step for step, so the same to the last bit as
    ``np.percentile(row, percent[i])`` (tests/agreement/test_resample.py holds it to numpy).
    np.percentile takes one set of percentiles for every row; a call per row, or every row's
    at every row, took most of a report's interval time."""
    n = ordered.shape[1]
    virtual = (n - 1) * np.true_divide(percent, 100)
    previous = np.floor(virtual)
    following = previous + 1
    following[virtual >= n - 1] = n - 1
    previous[virtual >= n - 1] = n - 1
    gamma = virtual - previous
    rows = np.arange(len(ordered))
    a = ordered[rows, previous.astype(np.intp)]
    b = ordered[rows, following.astype(np.intp)]
    difference = b - a
    found = a + difference * gamma
    np.subtract(b, difference * (1 - gamma), out=found, where=gamma >= 0.5)
    return found
