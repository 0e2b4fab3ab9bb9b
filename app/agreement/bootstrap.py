"""Cluster bootstrap: the same source image appears in many tasks, so its cases are not
independent. Resample source images (clusters) with their cases, not cases one by one.

scipy's ``stats.bootstrap`` does the resampling over cluster indices, BCa first; when BCa
degenerates (too few clusters, a constant statistic) the percentile interval is used and
the method says so.
"""

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from app.agreement.stats import Vote

RESAMPLES = 2000
SEED = 20240531


@dataclass(frozen=True)
class ClusterInterval:
    low: float | None
    high: float | None
    method: str  # "BCa", "percentile", or why there is none
    resamples: int
    clusters: int
    seed: int

    def as_dict(self) -> dict[str, object]:
        return {"low": self.low, "high": self.high, "method": self.method,
                "resamples": self.resamples, "clusters": self.clusters, "seed": self.seed}


def _cluster_tables(a: Sequence[Vote], b: Sequence[Vote], clusters: Sequence[object]) -> np.ndarray:
    """One 2x2 table per cluster, from the pairs both raters answered."""
    index = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    tables = np.zeros((len(index), 2, 2))
    for x, y, c in zip(a, b, clusters, strict=True):
        if x is not None and y is not None:
            tables[index[c], 0 if x else 1, 0 if y else 1] += 1
    return tables[tables.sum(axis=(1, 2)) > 0]


def agreement_of(table: np.ndarray) -> float:
    n = table.sum()
    return float(np.trace(table) / n) if n else float("nan")


def kappa_of(table: np.ndarray) -> float:
    if (table.sum(0) == 0).any() or (table.sum(1) == 0).any():
        return float("nan")  # a rater used one category: kappa is 0 by construction only
    try:
        return float(cohens_kappa(table, return_results=False))
    except (ZeroDivisionError, FloatingPointError):
        return float("nan")


def cluster_interval(a: Sequence[Vote], b: Sequence[Vote], clusters: Sequence[object],
                     figure: Callable[[np.ndarray], float], *, resamples: int = RESAMPLES,
                     seed: int = SEED) -> ClusterInterval:
    tables = _cluster_tables(a, b, clusters)
    k = len(tables)
    if k < 3:
        return ClusterInterval(None, None, f"too few source images ({k})", 0, k, seed)

    def statistic(indices: np.ndarray) -> float:
        with np.errstate(all="ignore"):
            return figure(tables[indices.astype(int)].sum(axis=0))

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate BCa is handled below, not printed
            result = stats.bootstrap((np.arange(k),), statistic, n_resamples=resamples,
                                     vectorized=False, method=method,
                                     rng=np.random.default_rng(seed))
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high) and high > low:
            return ClusterInterval(float(low), float(high), method, resamples, k, seed)
    # Undefined in some resamples, or the same in all: no interval would be honest.
    return ClusterInterval(None, None, "undefined or constant in resamples", resamples, k, seed)
