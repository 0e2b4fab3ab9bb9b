"""The adaptive design's sampler with the edit as the unit: which judged edits the next batch
draws, and with what probability.

Drawing whole source images made the design need more reads than drawing edits at random: a
drawn image brings all of its correlated edits, and which unit is drawn matters more than
where draws are aimed. So a batch draws ``size`` edits independently, with replacement, from
a distribution q over the pool's edits, fixed before the batch from what was read before it:

- each edit in proportion to the predicted root mean square of its agreement residual
  (y - theta), sqrt((1 - d)(1 - theta)^2 + d theta^2), d its predicted chance that the
  readers overturn the judge: the Neyman allocation of the Hansen-Hurwitz estimator
  (Cochran, "Sampling Techniques", 3rd ed., 9A.6; Zrnic & Candes, "Active Statistical
  Inference", ICML 2024, for the adaptive case);
- d from what is known before reading: the judge's weighted score (how near its threshold),
  its verdict, the edit's modality, disease and round, and its preservation metrics (the
  share of the image changed, SSIM outside the change), by a logistic model fitted to the
  reads so far (scikit-learn, L2-penalised); before MIN_FIT edits with both outcomes are
  read, the paper's 19 % overturn rate raised near the threshold;
- always mixed with the uniform design, q = (1 - f) q_adaptive + f / N, so every weight is at
  most 1 / f.

Each draw's weighted observation is unbiased for the pool's share given the batches before
it, which is what the anytime-valid sequence needs; an edit drawn twice is read once and
counted at each draw. Plain values in, plain values out: a batch's recorded state draws it
again, identically.
"""

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from app.confidence_sequence import TRUNCATION
from app.designs.adaptive.prior import PRIOR_DISAGREEMENT, UNIFORM_SHARE, Pool

MIN_FIT = 30  # edits with a consensus, of both outcomes, before the model is fitted
PENALTY = 1.0  # scikit-learn's C: the inverse strength of the L2 penalty
# The evidence rule (``steered_probabilities``): read edits of each outcome before the model
# may move the draws, the folds of its cross-fitting, the targeting shares it weighs (the
# largest keeps every weight within 4), and the share of uniform draws' predicted reads a
# targeting share must come within to be taken.
MIN_EACH = 10
FOLDS = 5
SHARES = (0.0, 0.25, 0.5, 0.75)
GAIN = 0.95


@dataclass(frozen=True)
class EditFeatures:
    """What is known of each pool edit before it is read, as a sparse design matrix: the score's
    nearness to the threshold, the verdict, the preservation metrics (each with a column
    saying whether it was measured), and one column per (modality, disease, round) cell and
    per modality."""

    matrix: sparse.csr_matrix
    prior: np.ndarray  # the overturn chance before any read
    # The same columns with the measured ones (nearness, verdict, metrics) scaled to unit
    # variance: the L2 penalty then weighs a standard deviation of each alike, where on the
    # raw scale it all but silenced the share changed (a spread of 0.1) for hundreds of reads.
    # The evidence rule fits on these; batches drawn before it replay on ``matrix``.
    scaled: sparse.csr_matrix

    @classmethod
    def of(cls, pool: Pool) -> "EditFeatures":
        n = len(pool.edit_image)
        passed = np.array([e.judge_pass for p in pool.images for e in p.edits], dtype=bool)
        cells = len(pool.cell_stratum)
        strata = len(pool.strata)
        near = pool.score_weight - 1.0  # 0 far from the threshold, up to 1 at it
        rows = np.arange(n)
        edits = [e for p in pool.images for e in p.edits]
        dense = sparse.csr_matrix(np.column_stack([
            near, passed.astype(float),
            *measured_column([e.changed for e in edits]), *measured_column([e.kept for e in edits])]))
        cell = sparse.csr_matrix((np.ones(n), (rows, pool.edit_cell)), shape=(n, cells))
        stratum = sparse.csr_matrix((np.ones(n), (rows, pool.edit_stratum)), shape=(n, strata))
        prior = np.minimum(0.95, PRIOR_DISAGREEMENT * pool.score_weight)
        spread = dense.toarray().std(axis=0)
        unit = sparse.csr_matrix(dense.multiply(1 / np.where(spread > 0, spread, 1.0)))
        return cls(sparse.hstack([dense, cell, stratum], format="csr"), prior,
                   sparse.hstack([unit, cell, stratum], format="csr"))


def measured_column(values: list[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """A metric as a column, unmeasured edits at the measured ones' mean, and a column saying
    which were measured (so the fit tells a missing metric from a typical one)."""
    known = np.array([v is not None for v in values])
    column = np.array([np.nan if v is None else float(v) for v in values])
    fill = float(np.nanmean(column)) if known.any() else 0.0
    return np.where(known, column, fill), known.astype(float)


def predicted_overturn(features: EditFeatures, where: np.ndarray, flipped: np.ndarray,
                       floor: int = MIN_FIT, scaled: bool = False) -> np.ndarray:
    """Per pool edit, the predicted chance that the readers overturn the judge, from the read
    edits' positions ``where`` and outcomes ``flipped`` (1 overturned); the prior before
    ``floor`` read edits."""
    if len(where) < floor or len(np.unique(flipped)) < 2:
        return features.prior
    model = LogisticRegression(C=PENALTY, max_iter=500)
    matrix = features.scaled if scaled else features.matrix
    model.fit(matrix[where], flipped.astype(int))
    return np.clip(model.predict_proba(matrix)[:, 1], 0.005, 0.995)


def edit_probabilities(features: EditFeatures, where: np.ndarray, flipped: np.ndarray,
                       uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """q over the pool's edits, in pool order; sums to 1, none below uniform_share / N."""
    n = features.matrix.shape[0]
    if not n:
        return np.zeros(0)
    d = predicted_overturn(features, where, flipped)
    # The share's running estimate, shrunk towards the prediction's while reads are few.
    theta = float((len(flipped) * (1 - flipped.mean()) + 10 * (1 - d.mean())) / (len(flipped) + 10)
                  if len(flipped) else 1 - d.mean())
    spread = np.sqrt((1 - d) * (1 - theta) ** 2 + d * theta**2)
    return (1 - uniform_share) * spread / spread.sum() + uniform_share / n


@dataclass(frozen=True)
class Evidence:
    """The read edits a batch's probabilities learn from: their positions in the pool, whether
    the readers overturned the judge (1), and the summed inverse-probability weights of the
    draws that brought them (1 each where drawn uniformly)."""

    where: np.ndarray
    flipped: np.ndarray
    weight: np.ndarray

    @property
    def enough(self) -> bool:
        """At least MIN_EACH read edits of each outcome: before that, a model of who is
        overturned rests on a handful of overturns, and its noisy predictions only spread
        the weights."""
        overturned = int(self.flipped.sum())
        return overturned >= MIN_EACH and len(self.flipped) - overturned >= MIN_EACH


@dataclass(frozen=True)
class Steer:
    q: np.ndarray  # over the pool's edits, in pool order
    share: float  # the share of q that follows the model (0: uniform draws)
    reason: str  # why this share, in words


def steered_probabilities(features: EditFeatures, evidence: Evidence, *, target: float,
                          shares: tuple[float, ...] = SHARES) -> Steer:
    """q over the pool's edits by the evidence rule: uniform until the read edits hold
    MIN_EACH of each outcome; then the model's allocation, its predictions shrunk by their
    own cross-fitted calibration slope, mixed with the uniform at the share whose predicted
    reads to ``target`` (see ``predicted_units``) are fewest, and only where they beat
    uniform draws' by GAIN: a share that would move on noise, or whose larger weights cost
    the sequence more than the allocation saves, leaves the draws uniform."""
    n = features.matrix.shape[0]
    uniform = np.full(n, 1 / n) if n else np.zeros(0)
    if not evidence.enough:
        return Steer(uniform, 0.0, f"uniform: fewer than {MIN_EACH} read edits of each outcome "
                                   "so far")
    folds = _cross_fitted(features, evidence)
    slope, intercept = _calibration(evidence, folds)
    if slope <= 0:
        return Steer(uniform, 0.0, "uniform: the model's cross-fitted predictions carry no signal")
    theta = float(np.average(1 - evidence.flipped, weights=evidence.weight))
    spreads = [_spread(_shrunk(d, slope, intercept), theta) for d in folds.pool]
    # Each read edit's spread under the model fitted without it, over its fold's total.
    own = np.array([spreads[k][evidence.where[j]] / spreads[k].sum() * n
                    for j, k in enumerate(folds.fold)])
    lowest = float(min(s.min() / s.mean() for s in spreads))
    units = {share: predicted_units(evidence, own, share, theta, target, lowest) for share in shares}
    best = min(units, key=lambda s: (units[s], s))
    if best == 0 or units[best] > GAIN * units[0]:
        return Steer(uniform, 0.0, f"uniform: targeting is not predicted to save {1 - GAIN:.0%} "
                                   "of the reads")
    d = _shrunk(predicted_overturn(features, evidence.where, evidence.flipped, floor=0,
                                   scaled=True), slope, intercept)
    spread = _spread(d, theta)
    q = (1 - best) / n + best * spread / spread.sum()
    return Steer(q, best, f"targeting {best:.0%}: predicted {units[best] / units[0]:.0%} of "
                          "uniform draws' reads")


def predicted_units(evidence: Evidence, own: np.ndarray, share: float, theta: float,
                    target: float, lowest: float) -> float:
    """The draws the anytime-valid sequence is predicted to need to exclude theta -+ target,
    drawing with q = (1 - share) / N + share * own / N (``own``: each read edit's allocation
    relative to uniform): 1 / the slower side's growth of log-capital per draw, its bet the
    best within the sequence's truncation, on the residual w (y - m) / B. B is the largest
    weight, which the truncation scales: larger weights cost bets, not only variance. The
    expectation over the pool is estimated from the read edits, each weighted by the inverse
    probability of its draws, with the allocation of a model fitted without it; ``lowest``:
    the pool's least allocation relative to uniform, which sets B."""
    relative = (1 - share) + share * own  # N q at each read edit
    bound = 1 / ((1 - share) + share * lowest)
    agree = 1 - evidence.flipped
    growth = []
    for m, cap in ((theta - target, TRUNCATION / max(theta - target, 1e-9)),
                   (theta + target, TRUNCATION / max(1 - theta - target, 1e-9))):
        second = float(np.average((agree - m) ** 2 / relative, weights=evidence.weight))
        mean = target / bound  # E r: the residual's mean at m, scaled
        variance = max(second / bound**2, 1e-12)
        bet = min(mean / variance, cap)
        growth.append(bet * mean - bet**2 * variance / 2)
    return 1 / max(min(growth), 1e-12)


@dataclass(frozen=True)
class _Folds:
    fold: np.ndarray  # each read edit's fold
    pool: list[np.ndarray]  # per fold, the predicted overturn chance of every pool edit
    own: np.ndarray  # each read edit's prediction by the model fitted without its fold


def _cross_fitted(features: EditFeatures, evidence: Evidence) -> _Folds:
    """FOLDS models, each fitted without one fold of the read edits (folds by position, so
    the same evidence always gives the same folds)."""
    order = np.argsort(evidence.where, kind="stable")
    fold = np.empty(len(order), dtype=np.int64)
    fold[order] = np.arange(len(order)) % FOLDS
    pool, own = [], np.empty(len(order))
    for k in range(FOLDS):
        out = fold != k
        d = predicted_overturn(features, evidence.where[out], evidence.flipped[out], floor=0,
                               scaled=True)
        pool.append(d)
        own[fold == k] = d[evidence.where[fold == k]]
    return _Folds(fold, pool, own)


def _calibration(evidence: Evidence, folds: _Folds) -> tuple[float, float]:
    """The slope and intercept of the read outcomes on the cross-fitted predictions' logit
    (weighted to the pool): a slope of 1 trusts the model, 0 finds nothing in it. Clipped to
    [0, 1], so predictions are only ever shrunk."""
    logit = np.log(folds.own / (1 - folds.own))
    if np.ptp(logit) < 1e-9:
        return 0.0, 0.0
    model = LogisticRegression(C=1e6, max_iter=500)
    model.fit(logit[:, None], evidence.flipped.astype(int), sample_weight=evidence.weight)
    return float(np.clip(model.coef_[0, 0], 0.0, 1.0)), float(model.intercept_[0])


def _shrunk(d: np.ndarray, slope: float, intercept: float) -> np.ndarray:
    logit = np.log(d / (1 - d))
    return np.clip(1 / (1 + np.exp(-(intercept + slope * logit))), 0.005, 0.995)


def _spread(d: np.ndarray, theta: float) -> np.ndarray:
    """Each edit's predicted root mean square agreement residual (y - theta)."""
    return np.sqrt((1 - d) * (1 - theta) ** 2 + d * theta**2)


def draw_edits(q: np.ndarray, size: int, seed: int, batch: int) -> list[int]:
    """The batch: positions in the pool of the edits drawn, with replacement, in draw order.
    The same q, seed and batch always give the same batch."""
    rng = np.random.default_rng([seed, batch])
    return [int(i) for i in rng.choice(len(q), size=size, replace=True, p=q)]
