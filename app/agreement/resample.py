"""The cluster bootstrap behind every interval of a study report.

One source image yields several edits (one per disease, and every refinement round), and its
edits are judged and read alike, so cases are not independent. Every interval therefore
resamples source images (clusters) with all their cases, never cases one by one.

Each figure is a function of sums over cases (a 2x2 table, Gwet's subject sums, a coincidence
matrix). Summing per cluster once and multiplying by a resamples x clusters matrix of draw
counts gives every resample's sums at once; the figure is then computed on all of them.

The interval is a BCa interval (Efron 1987) whose nominal tail is expanded as in Hesterberg's
expanded percentile interval (Hesterberg 2015, "What teachers should know about the
bootstrap", The American Statistician 69:371). With few clusters the plain percentile interval
is too narrow (92-93 % coverage at 25 source images in benchmarks/coverage.py), so the normal
quantile of the tail is sqrt(K / (K - 1)) * t(K - 1), K the number of source images; small
shares (a judge too lenient in 8 % of cases) are skewed, which BCa's bias correction and
acceleration (from the leave-one-cluster-out jackknife, cheap here: total minus one cluster's
sums) correct. Where they cannot be computed the expanded percentile interval is used, and
the figure says so.

A resample where a figure is undefined (a kappa whose raters used one category, a subgroup
drawn empty) is dropped, counted and reported; the interval comes from the rest, as long as
they are at least 1 - MAX_UNDEFINED of the resamples; otherwise no interval is shown. The same
method serves every figure, so intervals are comparable. With fewer than ``FEW_CLUSTERS``
source images an interval is still shown, with a warning.

A share that is the same in every resample (18 of 18 agree, none too lenient) would get a
zero-width interval, which cannot be right: it gets a Clopper-Pearson interval instead, with
each source image counted once (Korn & Graubard's effective sample size at the worst design
effect, since none can be estimated from a share without spread), and the figure says so.
"""

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from cachetools import LRUCache
from scipy import stats

from app.agreement.bca import CONFIDENCE, bca_interval, bca_intervals

RESAMPLES = 2000
SEED = 20240531
# Below this many source images the bootstrap distribution is too coarse to trust: at 10
# images (benchmarks/coverage.py --images 10 --edits 10) a small share such as "too lenient"
# covered 91.4 %; at 25 images every interval covers 94-96 %.
FEW_CLUSTERS = 12
# Above this share of undefined resamples no interval is shown. The resamples left are not a
# sample of the figure's spread but those where it happens to be defined (a kappa whose
# raters both used both answers): with 740 of 2,000 dropped, a kappa interval excluded 0
# when the figure's own spread did not.
MAX_UNDEFINED = 0.05
METHOD = ("cluster bootstrap over source images, BCa with the tail expanded for few clusters "
          "(Efron 1987; Hesterberg 2015); a share equal in every resample (at 0 or 1): "
          "Clopper-Pearson with each source image counted once (Korn & Graubard 1998)")

Statistic = Callable[[np.ndarray], np.ndarray]


class Share:
    """A share of cases, top / bottom of the summed features, that knows what it conditions
    on: a share given one rater's fail rests on the cases (and source images) with that fail,
    not on every case of the table. Its n and its number of source images are counted from
    ``bottom``, so an interval at 0 or 1 is exact for the right number of images."""

    def __init__(self, top: Statistic, bottom: Statistic) -> None:
        self.top, self.bottom = top, bottom

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        top, bottom = self.top(sums), self.bottom(sums)
        with np.errstate(all="ignore"):
            return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)


def _resting(statistic: Statistic, total: np.ndarray, per_cluster: np.ndarray,
             n: int, clusters: int) -> tuple[int, int]:
    """The cases and the source images a figure rests on: its denominator's, for a share."""
    if not isinstance(statistic, Share):
        return n, clusters
    return (round(float(statistic.bottom(total))),
            int((statistic.bottom(per_cluster) > 0).sum()))


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


# An interval narrower than this is no interval (a proportion at 0 or 1 in every resample).
DEGENERATE = 1e-12


def clopper_pearson(share: float, size: float) -> tuple[float, float]:
    """The exact binomial interval of a share of ``size`` observations (which may be an
    effective, fractional size: Korn & Graubard 1998); 18 of 18 gives [0.8147, 1]."""
    successes = share * size
    tail = (1 - CONFIDENCE) / 2
    low = 0.0 if successes <= 0 else float(stats.beta.ppf(tail, successes, size - successes + 1))
    high = 1.0 if successes >= size else float(stats.beta.ppf(1 - tail, successes + 1,
                                                              size - successes))
    return low, high


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


# The draws depend on nothing but the number of clusters, the resamples and the seed, so a
# report's many figures over the same number of source images share one (read-only) array.
# Kept by size, not count: a report draws for the whole slice and for each of ~23 diseases
# (a count of 8 kept evicting them within one report), while a 20,000-image array is 160 MB.
_kept_draws: LRUCache[tuple[int, int, int], np.ndarray] = LRUCache(
    maxsize=64 << 20, getsizeof=lambda draws: draws.nbytes)
_draws_lock = threading.Lock()


def _draws(k: int, resamples: int, seed: int) -> np.ndarray:
    key = (k, resamples, seed)
    with _draws_lock:
        found = _kept_draws.get(key)
    if found is not None:
        return found
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, max(k, 1), size=(resamples, k))
    offsets = chosen + k * np.arange(resamples)[:, None]
    counts = np.bincount(offsets.ravel(), minlength=resamples * k)
    # float32 halves the memory of large studies; sums of counts stay exact.
    draws = counts.reshape(resamples, k).astype(np.float32)
    draws.flags.writeable = False
    if draws.nbytes <= _kept_draws.maxsize:
        with _draws_lock:
            _kept_draws[key] = draws
    return draws


class ClusterBootstrap:
    """Resamples of the clusters of one set of cases; the draws are fixed by the seed and the
    number of clusters, so every figure over the same cases sees the same resamples."""

    def __init__(self, clusters: Sequence[Hashable], *, resamples: int = RESAMPLES,
                 seed: int = SEED, weights: Sequence[float] | None = None) -> None:
        order = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
        self.index = np.array([order[c] for c in clusters], dtype=np.int64)
        # Each case's weight to the pool it estimates (app/studies/allocation.py, or an
        # adaptive study's inverse draw probabilities): every figure that is a ratio of sums
        # of cases becomes the weighted ratio, and its resamples resample weighted clusters.
        self.weights = (None if weights is None or all(w == 1 for w in weights)
                        else np.asarray(weights, dtype=float))
        self.k = len(order)
        self.resamples = resamples
        self.seed = seed
        self._draws: np.ndarray | None = None

    @property
    def draws(self) -> np.ndarray:
        """Resamples x clusters: how often each cluster was drawn in each resample."""
        if self._draws is None:
            self._draws = _draws(self.k, self.resamples, self.seed)
        return self._draws

    def cluster_sums(self, features: np.ndarray) -> np.ndarray:
        """Clusters x features: the features of each cluster's cases, summed."""
        sums = np.zeros((self.k, features.shape[1]))
        np.add.at(sums, self.index, features if self.weights is None
                  else features * self.weights[:, None])
        return sums

    def resampled(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The features summed over all cases, over each resample's cases, and over all
        cases but one cluster's (the jackknife); and how many clusters hold any of them."""
        per_cluster = self.cluster_sums(features)
        total = per_cluster.sum(axis=0)
        boot = (self.draws @ per_cluster.astype(np.float32)).astype(np.float64)
        return total, boot, total[None, :] - per_cluster, int(per_cluster.any(axis=1).sum())

    def figures(self, features: np.ndarray, statistics: dict[str, Statistic], *,
                n: int, bounds: dict[str, tuple[float, float]] | None = None) -> dict[str, Figure]:
        """Several figures of the same cases from one resampling of their features."""
        total, boot, jackknife, clusters = self.resampled(features)
        per_cluster = total[None, :] - jackknife
        outcomes, resting = [], []
        for statistic in statistics.values():
            with np.errstate(all="ignore"):
                outcomes.append((statistic(total[None, :])[0], statistic(boot), statistic(jackknife)))
            resting.append(_resting(statistic, total, per_cluster, n, clusters))
        found = self._figures(outcomes, [c for _, c in resting], [m for m, _ in resting],
                              [(bounds or {}).get(name) for name in statistics])
        return dict(zip(statistics, found, strict=True))

    def figure(self, features: np.ndarray, statistic: Statistic, *, n: int,
               bounds: tuple[float, float] | None = None) -> Figure:
        limits = {"figure": bounds} if bounds is not None else None
        return self.figures(features, {"figure": statistic}, n=n, bounds=limits)["figure"]

    def figures_of_many(self, features: np.ndarray, statistics: dict[str, Statistic], *,
                        ns: Sequence[int], bounds: dict[str, tuple[float, float]]
                        ) -> list[dict[str, Figure]]:
        """The same figures of several feature sets over these cases (cases x sets x
        features), as ``figures`` gives each set's, from one resampling of them all. For
        statistics that act on each element of a stack alone (the 2x2 table's); a report
        computes thousands of figures, and the work per call is what it costs."""
        cases, sets, width = features.shape
        total, boot, jackknife, _ = self.resampled(features.reshape(cases, sets * width))
        held = self.cluster_sums(np.abs(features).sum(axis=2)).astype(bool).sum(axis=0)
        stacked = np.concatenate([total[None, :], boot, jackknife]).reshape(-1, sets, width)
        per_cluster = (total[None, :] - jackknife).reshape(-1, sets, width)
        outcomes, resting = [], []
        for statistic in statistics.values():
            with np.errstate(all="ignore"):
                values = statistic(stacked)
            for s in range(sets):
                outcomes.append((values[0, s], values[1:1 + self.resamples, s],
                                 values[1 + self.resamples:, s]))
                resting.append(_resting(statistic, stacked[0, s], per_cluster[:, s], ns[s],
                                        int(held[s])))
        found = self._figures(outcomes, [c for _, c in resting], [m for m, _ in resting],
                              [bounds.get(name) for name in statistics for _ in range(sets)])
        return [{name: found[i * sets + s] for i, name in enumerate(statistics)}
                for s in range(sets)]

    def figures_of_fits(self, outcomes: list[tuple[float, np.ndarray, np.ndarray]], *,
                        clusters: int, n: int,
                        bounds: tuple[float, float] | None = None) -> list[Figure]:
        """Figures of a model fitted by the caller to all cases, to each resample and to each
        jackknife sample (``resampled``'s sums): each outcome is (value on all cases, values
        on the resamples, values on the jackknife samples), NaN where a fit is undefined."""
        return self._figures(outcomes, [clusters] * len(outcomes), [n] * len(outcomes),
                             [bounds] * len(outcomes))

    def _figures(self, outcomes: list[tuple[float, np.ndarray, np.ndarray]], clusters: list[int],
                 ns: list[int], bounds: list[tuple[float, float] | None]) -> list[Figure]:
        """Each figure from its value on all cases, on every resample and on every jackknife
        (leave-one-cluster-out) sample. The figures whose resamples are all defined get their
        BCa limits in one vectorised step; the rest one by one."""
        figures: list[Figure | None] = [None] * len(outcomes)
        batch: list[int] = []
        for i, (value, values, left_out) in enumerate(outcomes):
            figure = self._without_interval(_finite(float(value)), values, clusters[i], ns[i],
                                            bounds[i])
            if figure is not None:
                figures[i] = figure
            elif np.isfinite(values).all() and np.isfinite(left_out).all():
                batch.append(i)
            else:
                finite = values[np.isfinite(values)]
                limits = bca_interval(finite, float(value), left_out[np.isfinite(left_out)],
                                      self.k, clusters[i])
                figures[i] = _interval(float(value), limits, ns[i], clusters[i],
                                       len(values) - len(finite), len(values), bounds[i])
        if batch:
            lows, highs = bca_intervals(np.stack([outcomes[i][1] for i in batch]),
                                        np.array([outcomes[i][0] for i in batch], dtype=float),
                                        np.stack([outcomes[i][2] for i in batch]),
                                        [clusters[i] for i in batch])
            for i, low, high in zip(batch, lows, highs, strict=True):
                figures[i] = _interval(float(outcomes[i][0]), (float(low), float(high)), ns[i],
                                       clusters[i], 0, self.resamples, bounds[i])
        return [f for f in figures if f is not None]

    @staticmethod
    def _without_interval(value: float | None, values: np.ndarray, clusters: int,
                          n: int, bounds: tuple[float, float] | None) -> Figure | None:
        """The figure when it has no interval (undefined, one source image, most resamples
        undefined); None when it has one."""
        # A figure rests on the source images that hold its cases (a reader who read a few
        # cases gives a figure on a few images), whatever the slice holds besides.
        if value is None or n == 0:
            return Figure(None, n=n, clusters=clusters)
        if clusters < 2 and bounds == (0.0, 1.0) and value in (0.0, 1.0):
            # 1 of 1 (or 0 of 1) still has an exact interval, on that one image
            low, high = clopper_pearson(value, clusters)
            return Figure(value, low, high, n=n, clusters=clusters,
                          warning="one source image: Clopper-Pearson interval on 1 source image")
        if clusters < 2:
            return Figure(value, n=n, clusters=clusters, warning="one source image: no interval")
        dropped = int(len(values) - np.isfinite(values).sum())
        finite = values[np.isfinite(values)]
        if (dropped and bounds == (0.0, 1.0) and value in (0.0, 1.0) and len(finite)
                and (finite == value).all()):
            # A share at 0 or 1 wherever it is defined: the exact interval needs no resample.
            low, high = clopper_pearson(value, clusters)
            return Figure(value, low, high, n, clusters, dropped,
                          f"every resample equal: Clopper-Pearson interval on {clusters} source "
                          "images (Korn & Graubard 1998)")
        if dropped > MAX_UNDEFINED * len(values):
            # A percentile of the rest would describe only the resamples that stay defined.
            return Figure(value, n=n, clusters=clusters, dropped=dropped,
                          warning=f"undefined in {dropped} of {len(values)} resamples (more "
                                  f"than {MAX_UNDEFINED:.0%}): no interval")
        return None


def _interval(value: float, limits: tuple[float, float], n: int, clusters: int, dropped: int,
              resamples: int, bounds: tuple[float, float] | None) -> Figure:
    """The figure with its BCa limits, kept within its bounds, and its warnings."""
    low, high = limits
    warning = (f"few clusters ({clusters} source images): interval unreliable"
               if clusters < FEW_CLUSTERS else None)
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    if bounds == (0.0, 1.0) and high - low < DEGENERATE:
        # Every resample gave the same share (18 of 18, or none): no bootstrap interval
        # can be right there. A Clopper-Pearson interval instead, each source image
        # counted as one observation, since the design effect cannot be estimated.
        low, high = clopper_pearson(value, clusters)
        note = (f"every resample equal: Clopper-Pearson interval on {clusters} source "
                "images (Korn & Graubard 1998)")
        warning = f"{warning}; {note}" if warning else note
    elif high - low < DEGENERATE:
        # The same for a signed figure (a kappa of 1 on every resample, a difference of 0):
        # a zero-width interval cannot be right, and there is no exact one to fall back on.
        note = "every resample equal: no interval"
        warning = f"{warning}; {note}" if warning else note
        return Figure(value, None, None, n, clusters, dropped, warning)
    if dropped:
        note = f"undefined in {dropped} of {resamples} resamples (left out)"
        warning = f"{warning}; {note}" if warning else note
    return Figure(value, float(low), float(high), n, clusters, dropped, warning)
