"""Cluster bootstrap: the same source image appears in many tasks, so its cases are not
independent. Resample source images (clusters) with their cases, not cases one by one.

scipy's ``stats.bootstrap`` does the resampling over cluster indices, BCa first; when BCa
degenerates (too few clusters, a constant statistic) the percentile interval is used and
the method says so.
"""

import contextlib
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


def agreement_of(tables: np.ndarray) -> np.ndarray:
    """Share agreeing, for any stack of 2x2 tables (last two axes)."""
    n = tables.sum(axis=(-2, -1))
    with np.errstate(all="ignore"):
        return np.where(n > 0, (tables[..., 0, 0] + tables[..., 1, 1]) / n, np.nan)


def kappa_of(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa (statsmodels) for any stack of 2x2 tables; NaN where a rater used one
    category, where kappa is 0 by construction only."""
    flat = tables.reshape(-1, 2, 2)
    out = np.full(len(flat), np.nan)
    for i, table in enumerate(flat):
        if (table.sum(0) > 0).all() and (table.sum(1) > 0).all():
            with contextlib.suppress(ZeroDivisionError, FloatingPointError):
                out[i] = cohens_kappa(table, return_results=False)
    return out.reshape(tables.shape[:-2])


def cluster_interval(a: Sequence[Vote], b: Sequence[Vote], clusters: Sequence[object],
                     figure: Callable[[np.ndarray], np.ndarray], *, resamples: int = RESAMPLES,
                     seed: int = SEED) -> ClusterInterval:
    tables = _cluster_tables(a, b, clusters)
    k = len(tables)
    if k < 3:
        return ClusterInterval(None, None, f"too few source images ({k})", 0, k, seed)

    flat = tables.reshape(k, 4).astype(np.float64)

    def statistic(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        # Vectorised over a batch of resamples: count how often each cluster was drawn
        # (bincount), then one matrix product sums the drawn clusters' tables.
        chosen = np.moveaxis(indices, axis, -1).astype(np.int64)
        batch = chosen.reshape(-1, chosen.shape[-1])
        offsets = batch + k * np.arange(len(batch))[:, None]
        counts = np.bincount(offsets.ravel(), minlength=len(batch) * k).reshape(len(batch), k)
        summed = (counts.astype(np.float64) @ flat).reshape(*chosen.shape[:-1], 2, 2)
        with np.errstate(all="ignore"):
            return figure(summed)

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate BCa is handled below, not printed
            result = stats.bootstrap((np.arange(k),), statistic, n_resamples=resamples,
                                     vectorized=True, batch=500, method=method,
                                     rng=np.random.default_rng(seed))
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high) and high > low:
            return ClusterInterval(float(low), float(high), method, resamples, k, seed)
    # Undefined in some resamples, or the same in all: no interval would be honest.
    return ClusterInterval(None, None, "undefined or constant in resamples", resamples, k, seed)
