"""How well a score (the judge's weighted score, a reader's confidence rating) separates the
edits readers pass from those they fail: the ROC curve and its area, sensitivity and
specificity at a threshold, the threshold that matches the readers best, and a reliability
table. Every figure takes weights (a stratified sample stands for its population) and clusters
(edits of one source image are resampled together).

The area is the weighted Mann-Whitney statistic: the chance a passed edit scores above a failed
one, ties counted half (Hanley and McNeil 1982, "The meaning and use of the area under a
receiver operating characteristic (ROC) curve", Radiology 143:29). Written as sums over the
score's distinct levels, it resamples with the cluster bootstrap every study figure uses; the
curve's points come from scikit-learn, whose area the tests hold this one to.
"""

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import roc_curve

from app.agreement.resample import ClusterBootstrap, Figure

# Figure is the type every function here returns; callers outside app.agreement take it here.
__all__ = ["Bin", "Figure", "RocPoint", "area", "best_threshold", "curve", "rates", "reader_areas",
           "reliability"]


@dataclass(frozen=True)
class RocPoint:
    threshold: float  # a score at or above this passes
    false_positive_rate: float  # 1 - specificity
    true_positive_rate: float  # sensitivity


@dataclass(frozen=True)
class Bin:
    """Edits whose score fell in [low, high): their mean score and the share readers passed."""

    low: float
    high: float
    mean_score: float
    passed: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"low": self.low, "high": self.high, "mean_score": self.mean_score,
                "passed": self.passed, "n": self.n}


def _arrays(truth: Sequence[bool] | np.ndarray, score: Sequence[float] | np.ndarray,
            weights: Sequence[float] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(truth, dtype=float)
    s = np.asarray(score, dtype=float)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    return y, s, w


def _boot(clusters: Sequence[Hashable] | np.ndarray | None, n: int) -> ClusterBootstrap:
    return ClusterBootstrap(list(clusters) if clusters is not None else list(range(n)))


def area(truth: Sequence[bool] | np.ndarray, score: Sequence[float] | np.ndarray, *,
         weights: Sequence[float] | np.ndarray | None = None,
         clusters: Sequence[Hashable] | np.ndarray | None = None) -> Figure:
    """The area under the ROC curve with its cluster-bootstrap interval; None when one class
    is missing."""
    y, s, w = _arrays(truth, score, weights)
    levels, at = np.unique(s, return_inverse=True)
    count = len(levels)
    # Per edit: its weight on its level, among the passed (first half) or the failed.
    features = np.zeros((len(y), 2 * count))
    rows = np.arange(len(y))
    features[rows, at.ravel() + np.where(y == 1, 0, count)] = w

    def statistic(sums: np.ndarray) -> np.ndarray:
        passed, failed = sums[:, :count], sums[:, count:]
        below = np.cumsum(failed, axis=1) - failed  # failed weight on lower levels
        return ((passed * (below + 0.5 * failed)).sum(axis=1)
                / (passed.sum(axis=1) * failed.sum(axis=1)))

    return _boot(clusters, len(y)).figure(features, statistic, n=len(y), bounds=(0.0, 1.0))


def curve(truth: Sequence[bool] | np.ndarray, score: Sequence[float] | np.ndarray, *,
          weights: Sequence[float] | np.ndarray | None = None) -> list[RocPoint]:
    """The weighted ROC curve from (0, 0) to (1, 1); empty when one class is missing."""
    y, s, w = _arrays(truth, score, weights)
    if len(np.unique(y)) < 2:
        return []
    fpr, tpr, thresholds = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    return [RocPoint(float(t), float(f), float(p)) for f, p, t in zip(fpr, tpr, thresholds, strict=True)]


def best_threshold(points: Sequence[RocPoint]) -> RocPoint | None:
    """The threshold with the largest Youden index (sensitivity + specificity - 1): where the
    score matches the readers best, misses and false alarms weighed alike."""
    finite = [p for p in points if np.isfinite(p.threshold)]
    if not finite:
        return None
    return max(finite, key=lambda p: (p.true_positive_rate - p.false_positive_rate, -p.threshold))


def rates(truth: Sequence[bool] | np.ndarray, decision: Sequence[bool] | np.ndarray, *,
          weights: Sequence[float] | np.ndarray | None = None,
          clusters: Sequence[Hashable] | np.ndarray | None = None) -> dict[str, Figure]:
    """Sensitivity (passes among the edits readers passed), specificity (fails among those
    they failed) and agreement of a yes/no decision, with intervals."""
    y, d, w = _arrays(truth, decision, weights)
    features = np.column_stack([w * y * d, w * y, w * (1 - y) * (1 - d), w * (1 - y),
                                w * (y == d), w])
    # The bootstrap evaluates these with division warnings off: 0/0 is an undefined figure.
    statistics = {"sensitivity": lambda s: s[:, 0] / s[:, 1],
                  "specificity": lambda s: s[:, 2] / s[:, 3],
                  "agreement": lambda s: s[:, 4] / s[:, 5]}
    bounds = {name: (0.0, 1.0) for name in statistics}
    figures = _boot(clusters, len(y)).figures(features, statistics, n=len(y), bounds=bounds)
    # Each rests on its own class: n is the edits of that class, not the sample.
    return {"sensitivity": _with_n(figures["sensitivity"], int((y == 1).sum())),
            "specificity": _with_n(figures["specificity"], int((y == 0).sum())),
            "agreement": figures["agreement"]}


def _with_n(figure: Figure, n: int) -> Figure:
    return Figure(figure.value if n else None, figure.low if n else None,
                  figure.high if n else None, n, figure.clusters, figure.dropped, figure.warning)


def reliability(truth: Sequence[bool] | np.ndarray, score: Sequence[float] | np.ndarray, *,
                weights: Sequence[float] | np.ndarray | None = None, bins: int = 10) -> list[Bin]:
    """Equal-width score bins over [0, 1] (the last one closed): in each, the weighted mean
    score against the weighted share the readers passed. A calibrated score sits on the
    diagonal. Empty bins are left out."""
    y, s, w = _arrays(truth, score, weights)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(s, edges[1:-1], right=False), 0, bins - 1)
    found = []
    for b in range(bins):
        inside = which == b
        total = float(w[inside].sum())
        if not inside.any() or total <= 0:
            continue
        found.append(Bin(round(float(edges[b]), 6), round(float(edges[b + 1]), 6),
                         float((w[inside] * s[inside]).sum() / total),
                         float((w[inside] * y[inside]).sum() / total), int(inside.sum())))
    return found


def reader_areas(truth: Sequence[bool] | np.ndarray, scores: dict[str, np.ndarray], *,
                 clusters: Sequence[Hashable] | np.ndarray | None = None) -> dict[str, Figure]:
    """Each reader's area, and their mean ("readers' mean"), over the same cases: ``scores``
    maps a reader to one rating per case (nan where the reader did not read it). One
    resampling of the cases serves every figure, so the mean's interval carries the
    correlation of readers who read the same cases. The cases are random; the readers are
    these readers (for readers as a random sample too, the iMRMC export goes to MRMC
    software)."""
    y = np.asarray(truth, dtype=bool)
    names = sorted(scores)
    levels = np.unique(np.concatenate([np.asarray(scores[r], dtype=float) for r in names]))
    levels = levels[~np.isnan(levels)]
    count = len(levels)
    blocks = []
    for reader in names:
        s = np.asarray(scores[reader], dtype=float)
        block = np.zeros((len(y), 2 * count))
        read = ~np.isnan(s)
        at = np.searchsorted(levels, s[read])
        block[np.flatnonzero(read), at + np.where(y[read], 0, count)] = 1.0
        blocks.append(block)
    features = np.hstack(blocks) if blocks else np.zeros((len(y), 0))

    def one(sums: np.ndarray, r: int) -> np.ndarray:
        part = sums[:, 2 * count * r:2 * count * (r + 1)]
        passed, failed = part[:, :count], part[:, count:]
        below = np.cumsum(failed, axis=1) - failed
        return ((passed * (below + 0.5 * failed)).sum(axis=1)
                / (passed.sum(axis=1) * failed.sum(axis=1)))

    statistics: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        reader: functools.partial(one, r=r) for r, reader in enumerate(names)}
    if names:
        statistics["readers' mean"] = lambda sums: np.mean(
            [one(sums, r) for r in range(len(names))], axis=0)
    bounds = {name: (0.0, 1.0) for name in statistics}
    return _boot(clusters, len(y)).figures(features, statistics, n=len(y), bounds=bounds)
