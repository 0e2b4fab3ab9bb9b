"""The adaptive design's sampler: which source images the next batch draws, and with what
probability, so that the target figure's interval shrinks fastest.

Source images are the unit: a drawn image brings every judged edit of the pool it holds. A
batch draws ``size`` images independently, with replacement, from a distribution q over the
pool's images, fixed before the batch from what was read before it:

- across strata (modality), Neyman allocation: each stratum's share in proportion to its size
  times the spread of its images' agreement residuals, as seen so far (Neyman 1934; Cochran,
  "Sampling Techniques", 3rd ed., 5.5);
- within a stratum, in proportion to each image's predicted spread, from how often the
  readers overturn the judge on edits of the same disease and round (smoothed towards the
  stratum's and the study's rates) and, before any read, from how near the judge's weighted
  score lies to its threshold;
- always mixed with the uniform design, q = (1 - f) q_adaptive + f / N with f = UNIFORM_SHARE,
  so no image's probability falls below f / N: the inverse-probability weights stay at most
  1 / f, and the design cannot do much worse than drawing uniformly.

With-replacement draws at known probabilities make each draw's inverse-probability weighted
observation unbiased for the pool's figure, given everything before its batch (the
Hansen-Hurwitz estimator; Zrnic & Candes, "Active Statistical Inference", ICML 2024, for the
adaptive case), which is what the anytime-valid interval needs (app/confidence_sequence.py).

Everything here is plain values in, plain values out, so a recorded batch is drawn again,
identically, by ``draw`` from its recorded state.
"""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

UNIFORM_SHARE = 0.5
SMOOTHING = 10.0  # pseudo-edits behind a cell's overturn rate, at its stratum's rate
PRIOR_DISAGREEMENT = 0.19  # the paper: 81 % agreement between the judge and radiologists
THRESHOLD, SCORE_SCALE = 0.7, 0.1  # the judge's weighted-score threshold (the paper) and its spread
MIN_STRATA = 2
MIN_IMAGES = 20


@dataclass(frozen=True)
class PoolEdit:
    attempt_id: int
    task_id: int
    disease: str
    round: int
    judge_pass: bool
    score: float | None = None
    # Its preservation metrics (app/images/metrics.py), None until measured: the share of the
    # image changed, and SSIM outside the change.
    changed: float | None = None
    kept: float | None = None


@dataclass(frozen=True)
class PoolImage:
    image: int  # source image id
    stratum: str
    edits: tuple[PoolEdit, ...]


@dataclass(frozen=True)
class Observed:
    """A drawn image once every read on it is in: per edit, whether the readers' consensus
    overturned the judge (None: no consensus or no verdict)."""

    image: int
    overturned: tuple[bool | None, ...]  # in the order of the image's pool edits


@dataclass
class State:
    """What a batch's probabilities were computed from: enough to compute them again."""

    batch: int
    size: int
    seed: int
    uniform_share: float
    observed: list[dict[str, Any]] = field(default_factory=list)  # Observed as dicts

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> "State":
        return cls(**raw)


def check_pool(pool: Sequence[PoolImage]) -> str | None:
    """Why an adaptive study cannot be drawn from this pool, or None."""
    strata = {p.stratum for p in pool}
    if len(strata) < MIN_STRATA:
        return (f"an adaptive study needs at least {MIN_STRATA} strata (modalities) to allocate "
                f"between; this pool has {len(strata)}")
    if len(pool) < MIN_IMAGES:
        return f"an adaptive study needs at least {MIN_IMAGES} source images; this pool has {len(pool)}"
    return None


class Pool:
    """The pool as arrays, built once: per edit its image, cell (stratum, disease, round) and
    stratum as integer codes, and its score weight; per image its stratum. A batch over
    220K judged edits is then a few bincounts, not a loop."""

    def __init__(self, images: Sequence[PoolImage]) -> None:
        self.images = list(images)
        self.at = {p.image: i for i, p in enumerate(self.images)}
        strata = sorted({p.stratum for p in self.images})
        code = {h: k for k, h in enumerate(strata)}
        cells: dict[tuple[str, str, int], int] = {}
        edit_image: list[int] = []
        edit_cell: list[int] = []
        weights: list[float] = []
        self.first_edit: list[int] = []
        for i, p in enumerate(self.images):
            self.first_edit.append(len(edit_image))
            for e in p.edits:
                edit_image.append(i)
                edit_cell.append(cells.setdefault((p.stratum, e.disease, e.round), len(cells)))
                weights.append(_score_weight(e.score))
        self.strata = strata
        self.image_stratum = np.array([code[p.stratum] for p in self.images], dtype=np.int64)
        self.edit_image = np.array(edit_image, dtype=np.int64)
        self.edit_cell = np.array(edit_cell, dtype=np.int64)
        self.cell_stratum = np.zeros(len(cells), dtype=np.int64)
        for (stratum, _, _), c in cells.items():
            self.cell_stratum[c] = code[stratum]
        self.edit_stratum = self.image_stratum[self.edit_image] if len(edit_image) else np.zeros(0, np.int64)
        self.score_weight = np.array(weights)
        self.sizes = np.bincount(self.edit_image, minlength=len(self.images)).astype(float)

    def __len__(self) -> int:
        return len(self.images)

    def edits_of(self, observed: Sequence[Observed]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The observed edits with a consensus: their positions, whether overturned, and the
        position of their image."""
        where, flipped, image = [], [], []
        for o in observed:
            i = self.at.get(o.image)
            if i is None:
                continue
            for k, f in enumerate(o.overturned):
                if f is not None:
                    where.append(self.first_edit[i] + k)
                    flipped.append(float(f))
                    image.append(i)
        return (np.array(where, dtype=np.int64), np.array(flipped), np.array(image, dtype=np.int64))


def _score_weight(score: float | None) -> float:
    """How uncertain a verdict looks before any read: 1 far from the threshold, up to 2 at it."""
    return 1.0 if score is None else 1.0 + math.exp(-abs(score - THRESHOLD) / SCORE_SCALE)


def _as_pool(pool: "Sequence[PoolImage] | Pool") -> Pool:
    return pool if isinstance(pool, Pool) else Pool(pool)


def disagreement_from(arrays: Pool, where: np.ndarray, flipped: np.ndarray) -> np.ndarray:
    """Per edit, the predicted chance that the readers overturn the judge, from the observed
    edits' positions and outcomes: the overturn rate of its cell (stratum, disease, round),
    smoothed towards its stratum's and the study's rate; before any read, the paper's rate
    raised where the score lies near the threshold."""
    if not len(where):
        return np.minimum(0.95, PRIOR_DISAGREEMENT * arrays.score_weight)
    overall = (flipped.sum() + SMOOTHING * PRIOR_DISAGREEMENT) / (len(flipped) + SMOOTHING)
    k = len(arrays.strata)
    stratum_o = np.bincount(arrays.edit_stratum[where], weights=flipped, minlength=k)
    stratum_n = np.bincount(arrays.edit_stratum[where], minlength=k)
    stratum_rate = (stratum_o + SMOOTHING * overall) / (stratum_n + SMOOTHING)
    cells = len(arrays.cell_stratum)
    cell_o = np.bincount(arrays.edit_cell[where], weights=flipped, minlength=cells)
    cell_n = np.bincount(arrays.edit_cell[where], minlength=cells)
    cell_rate = (cell_o + SMOOTHING * stratum_rate[arrays.cell_stratum]) / (cell_n + SMOOTHING)
    return cell_rate[arrays.edit_cell]


def spread_from(arrays: Pool, d: np.ndarray) -> np.ndarray:
    """Per image, the predicted root mean square of its agreement residual sum(a_j - theta):
    sqrt(sum d_j (1 - d_j) + (sum (1 - d_j) - theta m)^2), d_j the edit's predicted overturn
    rate and theta the mean predicted agreement."""
    theta = 1 - float(d.mean()) if len(d) else 1.0
    n = len(arrays)
    variance = np.bincount(arrays.edit_image, weights=d * (1 - d), minlength=n)
    bias = np.bincount(arrays.edit_image, weights=(1 - d) - theta, minlength=n)
    return np.maximum(np.sqrt(variance + bias**2), 1e-6)


def neyman_from(arrays: Pool, where: np.ndarray, flipped: np.ndarray, image: np.ndarray,
                spread: np.ndarray) -> np.ndarray:
    """Per stratum (code order), the observed spread of its completed images' residuals over
    the predicted one, 1 until a stratum has 5 completed images: Neyman allocation from the
    variance seen."""
    factors = np.ones(len(arrays.strata))
    if not len(where):
        return factors
    theta = 1 - flipped.mean()
    n = len(arrays)
    residual = np.bincount(image, weights=(1 - flipped) - theta, minlength=n)
    done = np.bincount(image, minlength=n) > 0
    for k in range(len(arrays.strata)):
        members = done & (arrays.image_stratum == k)
        if members.sum() >= 5:
            seen = float((residual[members] ** 2).mean())
            predicted = float((spread[members] ** 2).mean())
            factors[k] = math.sqrt(max(seen, 1e-6) / max(predicted, 1e-6))
    return factors


def probabilities(pool: "Sequence[PoolImage] | Pool", observed: Sequence[Observed],
                  uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """q over the pool's images, in pool order; sums to 1, none below uniform_share / N."""
    arrays = _as_pool(pool)
    return probabilities_from(arrays, *arrays.edits_of(observed), uniform_share)


def probabilities_from(arrays: Pool, where: np.ndarray, flipped: np.ndarray, image: np.ndarray,
                       uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """``probabilities`` from the observed edits' positions, outcomes and images."""
    if not len(arrays):
        return np.zeros(0)
    spread = spread_from(arrays, disagreement_from(arrays, where, flipped))
    factors = neyman_from(arrays, where, flipped, image, spread)
    score = spread * factors[arrays.image_stratum]
    adaptive = score / score.sum()
    return (1 - uniform_share) * adaptive + uniform_share / len(arrays)


def draw(pool: "Sequence[PoolImage] | Pool", state: State) -> tuple[list[int], np.ndarray]:
    """The batch: positions in the pool of the images drawn (with replacement, in draw order)
    and q over the pool. The same state always gives the same batch."""
    arrays = _as_pool(pool)
    q = probabilities(arrays, [Observed(o["image"], tuple(o["overturned"])) for o in state.observed],
                      state.uniform_share)
    rng = np.random.default_rng([state.seed, state.batch])
    return [int(i) for i in rng.choice(len(arrays), size=state.size, replace=True, p=q)], q

