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

from app.designs.adaptive.prior import PRIOR_DISAGREEMENT, UNIFORM_SHARE, Pool

MIN_FIT = 30  # edits with a consensus, of both outcomes, before the model is fitted
PENALTY = 1.0  # scikit-learn's C: the inverse strength of the L2 penalty


@dataclass(frozen=True)
class EditFeatures:
    """What is known of each pool edit before it is read, as a sparse design matrix: the score's
    nearness to the threshold, the verdict, the preservation metrics (each with a column
    saying whether it was measured), and one column per (modality, disease, round) cell and
    per modality."""

    matrix: sparse.csr_matrix
    prior: np.ndarray  # the overturn chance before any read

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
        return cls(sparse.hstack([dense, cell, stratum], format="csr"), prior)


def measured_column(values: list[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """A metric as a column, unmeasured edits at the measured ones' mean, and a column saying
    which were measured (so the fit tells a missing metric from a typical one)."""
    known = np.array([v is not None for v in values])
    column = np.array([np.nan if v is None else float(v) for v in values])
    fill = float(np.nanmean(column)) if known.any() else 0.0
    return np.where(known, column, fill), known.astype(float)


def predicted_overturn(features: EditFeatures, where: np.ndarray, flipped: np.ndarray) -> np.ndarray:
    """Per pool edit, the predicted chance that the readers overturn the judge, from the read
    edits' positions ``where`` and outcomes ``flipped`` (1 overturned)."""
    if len(where) < MIN_FIT or len(np.unique(flipped)) < 2:
        return features.prior
    model = LogisticRegression(C=PENALTY, max_iter=500)
    model.fit(features.matrix[where], flipped.astype(int))
    return np.clip(model.predict_proba(features.matrix)[:, 1], 0.005, 0.995)


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


def draw_edits(q: np.ndarray, size: int, seed: int, batch: int) -> list[int]:
    """The batch: positions in the pool of the edits drawn, with replacement, in draw order.
    The same q, seed and batch always give the same batch."""
    rng = np.random.default_rng([seed, batch])
    return [int(i) for i in rng.choice(len(q), size=size, replace=True, p=q)]
