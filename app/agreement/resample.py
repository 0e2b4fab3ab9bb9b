"""The cluster bootstrap behind every interval of a study report.

One source image yields several edits (one per disease, and every refinement round), and its
edits are judged and read alike, so cases are not independent. Every interval therefore
resamples source images (clusters) with all their cases, never cases one by one.

Each figure is a function of sums over cases (a 2x2 table, Gwet's subject sums, a coincidence
matrix). Summing per cluster once and multiplying by a resamples x clusters matrix of draw
counts gives every resample's sums at once; the figure is then computed on all of them.

A resample where a figure is undefined (a kappa whose raters used one category, a subgroup
drawn empty) is dropped, counted and reported; the interval is the percentile interval of
the rest. The same method serves every figure, so intervals are comparable. With fewer than
``FEW_CLUSTERS`` source images an interval is still shown, with a warning.
"""

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 20240531
CONFIDENCE = 0.95
# Below this many source images the bootstrap distribution is too coarse to trust.
FEW_CLUSTERS = 10
METHOD = "cluster bootstrap over source images, percentile"

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Figure:
    """A figure with its cluster-bootstrap interval; value None when undefined."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0  # cases (or pairs) it rests on
    clusters: int = 0  # source images among them
    dropped: int = 0  # resamples where the figure was undefined
    warning: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n,
                "clusters": self.clusters, "dropped": self.dropped, "warning": self.warning}


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


class ClusterBootstrap:
    """Resamples of the clusters of one set of cases; the draws are fixed by the seed and the
    number of clusters, so every figure over the same cases sees the same resamples."""

    def __init__(self, clusters: Sequence[Hashable], *, resamples: int = RESAMPLES,
                 seed: int = SEED) -> None:
        order = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
        self.index = np.array([order[c] for c in clusters], dtype=np.int64)
        self.k = len(order)
        self.resamples = resamples
        self.seed = seed
        self._draws: np.ndarray | None = None

    @property
    def draws(self) -> np.ndarray:
        """Resamples x clusters: how often each cluster was drawn in each resample."""
        if self._draws is None:
            rng = np.random.default_rng(self.seed)
            chosen = rng.integers(0, max(self.k, 1), size=(self.resamples, self.k))
            offsets = chosen + self.k * np.arange(self.resamples)[:, None]
            counts = np.bincount(offsets.ravel(), minlength=self.resamples * self.k)
            # float32 halves the memory of large studies; sums of counts stay exact.
            self._draws = counts.reshape(self.resamples, self.k).astype(np.float32)
        return self._draws

    def cluster_sums(self, features: np.ndarray) -> np.ndarray:
        """Clusters x features: the features of each cluster's cases, summed."""
        sums = np.zeros((self.k, features.shape[1]))
        np.add.at(sums, self.index, features)
        return sums

    def resampled(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The features summed over all cases, and over each resample's cases."""
        per_cluster = self.cluster_sums(features)
        boot = (self.draws @ per_cluster.astype(np.float32)).astype(np.float64)
        return per_cluster.sum(axis=0), boot

    def figures(self, features: np.ndarray, statistics: dict[str, Statistic], *,
                n: int, bounds: dict[str, tuple[float, float]] | None = None) -> dict[str, Figure]:
        """Several figures of the same cases from one resampling of their features."""
        total, boot = self.resampled(features)
        return {name: self._figure(statistic, total, boot, n, (bounds or {}).get(name))
                for name, statistic in statistics.items()}

    def figure(self, features: np.ndarray, statistic: Statistic, *, n: int,
               bounds: tuple[float, float] | None = None) -> Figure:
        total, boot = self.resampled(features)
        return self._figure(statistic, total, boot, n, bounds)

    def _figure(self, statistic: Statistic, total: np.ndarray, boot: np.ndarray, n: int,
                bounds: tuple[float, float] | None) -> Figure:
        with np.errstate(all="ignore"):
            value = _finite(float(statistic(total[None, :])[0]))
        clusters = self.k
        if value is None or n == 0:
            return Figure(None, n=n, clusters=clusters)
        warning = (f"few clusters ({clusters} source images): interval unreliable"
                   if clusters < FEW_CLUSTERS else None)
        if clusters < 2:
            return Figure(value, n=n, clusters=clusters,
                          warning="one source image: no interval")
        with np.errstate(all="ignore"):
            values = statistic(boot)
        finite = values[np.isfinite(values)]
        dropped = int(len(values) - len(finite))
        if len(finite) < 0.5 * len(values):
            # More than half the resamples undefined: a percentile of the rest would mislead.
            return Figure(value, n=n, clusters=clusters, dropped=dropped,
                          warning=f"undefined in {dropped} of {len(values)} resamples: no interval")
        tail = (1 - CONFIDENCE) / 2 * 100
        low, high = np.percentile(finite, [tail, 100 - tail])
        if bounds is not None:
            low, high = max(bounds[0], low), min(bounds[1], high)
        if dropped:
            note = f"undefined in {dropped} of {len(values)} resamples (left out)"
            warning = f"{warning}; {note}" if warning else note
        return Figure(value, float(low), float(high), n, clusters, dropped, warning)
