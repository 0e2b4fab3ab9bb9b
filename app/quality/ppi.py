"""Prediction-powered inference (PPI++) for a mean: the judge's answer on every edit of the
data set, corrected by the readers' answers on the study's sample.

The estimator and its tuning parameter are those of ``ppi_py.ppi_mean_ci`` (Angelopoulos,
Duchi and Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference", arXiv:2311.01453),
written here in closed form because the package pulls numba and gdown into a server; the
tests hold this code to ``ppi_mean_ci`` on fixed data to 1e-9.

    estimate = mean(w_all * lam * judge_all) + mean(w * (reader - lam * judge))

Two departures, each of which reduces to the package's formula when it does not apply:

- Clusters. Edits of one source image are judged and read alike, so each variance term sums
  the centred terms per source image before squaring (the cluster-robust "sandwich"
  variance). With one edit per image this is the package's ``std(ddof=0)**2 / n``.
- Strata. A stratified sample (the study draws by verdict, direction and modality, with
  weights N_h / n_h) has no variance between its strata, so the readers' term is centred on
  its stratum's mean, not the overall mean. With one stratum this is the package's term.
"""

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PpiEstimate:
    value: float
    low: float
    high: float
    se: float
    lam: float  # 0: the readers alone; 1: plain PPI
    n: int  # labelled edits
    N: int  # edits the judge answered for


@functools.lru_cache(maxsize=8)
def _z(alpha: float) -> float:
    """The two-sided normal quantile; cached, as a report asks for the same one hundreds of
    times and scipy's ppf costs a fraction of a millisecond each."""
    return float(stats.norm.ppf(1 - alpha / 2))


def normalised(weights: np.ndarray | None, n: int) -> np.ndarray:
    """Weights scaled to sum to n, as ``ppi_py`` scales them (all ones when None)."""
    if weights is None:
        return np.ones(n)
    weights = np.asarray(weights, dtype=float)
    return weights / weights.sum() * n


def _codes(labels: Sequence[Hashable] | np.ndarray) -> np.ndarray:
    """Labels as integer codes for bincount; integer labels are taken as codes already
    (callers that estimate many parts of one data set code it once)."""
    array = np.asarray(labels)
    if array.dtype.kind in "iu" and (array.size == 0 or array.min() >= 0):
        return array.astype(np.int64, copy=False)
    return np.unique(np.asarray([str(x) for x in labels]), return_inverse=True)[1]


def _clustered_variance(terms: np.ndarray, clusters: Sequence[Hashable] | np.ndarray | None,
                        strata: Sequence[Hashable] | np.ndarray | None = None,
                        drawn: np.ndarray | None = None) -> float:
    """Var of mean(terms): each term centred on its stratum's mean, summed per cluster; with
    ``drawn`` (each term's chance of having been sampled) the finite population correction
    1 - f of its stratum scales its share."""
    n = len(terms)
    centred = terms - terms.mean()
    if strata is not None:
        index = _codes(strata)
        counts = np.bincount(index)
        sums = np.bincount(index, weights=terms, minlength=len(counts))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
        centred = terms - means[index]
    if drawn is not None:
        centred = centred * np.sqrt(np.clip(1 - np.asarray(drawn, dtype=float), 0.0, 1.0))
    if clusters is None:
        return float((centred ** 2).sum() / n ** 2)
    per_cluster = np.bincount(_codes(clusters), weights=centred)
    return float((per_cluster ** 2).sum() / n ** 2)


def _times(w: np.ndarray | None, values: np.ndarray) -> np.ndarray:
    return values if w is None else w * values


def tuned_lambda(y: np.ndarray, judge: np.ndarray, judge_all: np.ndarray,
                 w: np.ndarray, w_all: np.ndarray | None) -> float:
    """The power-tuning parameter of PPI++ (clipped to [0, 1]), as ``ppi_py`` computes it;
    0 when the judge's answers do not vary (it then carries nothing). ``w_all`` None: every
    weight one, which the data set's terms are not multiplied by (the same figures, bit for
    bit, without three passes over 220K edits)."""
    n, big_n = len(y), len(judge_all)
    first = _times(w_all, judge_all).mean() + (w * (y - judge)).mean()
    grads = w * (y - first)
    grads_hat = w * (judge - first)
    grads_hat_all = _times(w_all, judge_all - first)
    cov = (2 / n) * ((grads - grads.mean()) * (grads_hat - grads_hat.mean())).sum()
    var_hat = float(np.var(np.concatenate([grads_hat, grads_hat_all]), ddof=1))
    if not np.isfinite(var_hat) or var_hat <= 0:
        return 0.0
    return float(np.clip(cov / (2 * (1 + n / big_n) * var_hat), 0.0, 1.0))


def ppi_mean(y: Sequence[float] | np.ndarray, judge: Sequence[float] | np.ndarray,
             judge_all: Sequence[float] | np.ndarray, *,
             weights: np.ndarray | None = None, weights_all: np.ndarray | None = None,
             clusters: Sequence[Hashable] | np.ndarray | None = None,
             clusters_all: Sequence[Hashable] | np.ndarray | None = None,
             strata: Sequence[Hashable] | np.ndarray | None = None,
             alpha: float = 0.05, lam: float | None = None,
             census: bool = False, drawn: np.ndarray | None = None) -> PpiEstimate:
    """The PPI++ estimate of the mean of the readers' answer over the whole data set, with
    its two-sided normal interval at level 1 - alpha.

    ``y`` and ``judge`` are the readers' and the judge's answers (0 / 1) on the labelled
    edits, ``judge_all`` the judge's answers on every edit of the data set; ``weights`` are
    the labelled edits' inverse inclusion probabilities.

    ``census``: the judge answered for every edit of the data set whose rate is wanted (a
    fixed set, not a sample of a larger one), so its term is known exactly and adds no
    variance; only the sampling of the labelled edits does. Off, the package's formula."""
    y_ = np.asarray(y, dtype=float)
    judge_ = np.asarray(judge, dtype=float)
    all_ = np.asarray(judge_all, dtype=float)
    n, big_n = len(y_), len(all_)
    if n == 0 or big_n == 0 or len(judge_) != n:
        raise ValueError("PPI needs labelled edits with a judge answer each, and the data set")
    w = normalised(weights, n)
    w_all = None if weights_all is None else normalised(weights_all, big_n)
    if lam is None:
        lam = tuned_lambda(y_, judge_, all_, w, w_all)
    imputed = lam * all_ if w_all is None else w_all * lam * all_
    rectifier = w * (y_ - lam * judge_)
    value = float(imputed.mean() + rectifier.mean())
    variance = _clustered_variance(rectifier, clusters, strata, drawn if census else None)
    if not census:
        variance += _clustered_variance(imputed, clusters_all)
    se = float(np.sqrt(variance))
    z = _z(alpha)
    return PpiEstimate(value, value - z * se, value + z * se, se, float(lam), n, big_n)


def classical_mean(y: Sequence[float] | np.ndarray, *, weights: np.ndarray | None = None,
                   clusters: Sequence[Hashable] | np.ndarray | None = None,
                   strata: Sequence[Hashable] | np.ndarray | None = None,
                   alpha: float = 0.05, drawn: np.ndarray | None = None) -> PpiEstimate:
    """The readers alone: the weighted mean of their answers, with the same variance (PPI
    with lambda 0, which is what ``ppi_py``'s classical interval is)."""
    y_ = np.asarray(y, dtype=float)
    n = len(y_)
    if n == 0:
        raise ValueError("no labelled edits")
    w = normalised(weights, n)
    terms = w * y_
    value = float(terms.mean())
    se = float(np.sqrt(_clustered_variance(terms, clusters, strata, drawn)))
    z = _z(alpha)
    return PpiEstimate(value, value - z * se, value + z * se, se, 0.0, n, 0)


def ppi_correlation(y: np.ndarray, judge: np.ndarray, weights: np.ndarray | None = None) -> float:
    """How far the judge's answer tracks the readers' on the labelled edits, as
    ``ppi_py.ppi_mean_power`` defines it (Broska, Howes and van Loon 2024), capped at
    1 - 1/n; 0 when either does not vary."""
    n = len(y)
    w = normalised(weights, n)
    point = float((w * y).sum() / w.sum())
    grads = w * (y - point)
    grads_hat = w * (judge - point)
    gc, hc = grads - grads.mean(), grads_hat - grads_hat.mean()
    var_g, var_h = (gc ** 2).sum() / n, (hc ** 2).sum() / n
    if var_g <= 0 or var_h <= 0:
        return 0.0
    return float(min((gc * hc).sum() / n / np.sqrt(var_g * var_h), 1 - 1 / n))


def labels_needed(effective_n: float, rho: float, population: int) -> int:
    """Labelled edits PPI needs to be as precise as ``effective_n`` labelled edits alone,
    when the data set holds ``population`` edits the judge answered for (the labelled ones
    among them): ``ppi_py.ppi_mean_power``'s pair with n + N fixed to the data set's size.
    Never more than the data set."""
    if effective_n >= population:
        return population
    r2 = rho ** 2
    return min(population, round(effective_n * population * (1 - r2) / (population - r2 * effective_n)))
