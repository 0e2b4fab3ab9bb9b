"""Agreement among many raters when some ratings are missing.

Fleiss' kappa in Gwet's generalised form and Gwet's AC1 (Gwet 2014, *Handbook of Inter-Rater
Reliability*, 4th ed., ch. 2 and 5): a subject counts towards observed agreement once two or
more raters rated it, and towards the category shares once one did, so a reader who skipped
cases leaves the coefficient defined. statsmodels' ``fleiss_kappa`` needs complete rows and
the ``irrCAC`` package pins scipy 1.12, so the formulas are written here and tested against
irrCAC's published values (``cac.raw4raters``: Fleiss 0.76117, AC1 0.77544, with their
standard errors). Krippendorff's alpha comes from the ``krippendorff`` package; its
coincidence matrix is also summed here, per subject, so the cluster bootstrap can resample it.

Every coefficient is also written as a function of sums over subjects, so that resampled
sums (``app/agreement/resample.py``) give resampled coefficients without a Python loop.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np

from app.agreement.stats import Vote

CATEGORIES = 2  # pass / fail


def category_counts(ratings: Sequence[Sequence[Vote]]) -> np.ndarray:
    """Subjects x (pass, fail): how many raters chose each. ``ratings`` is subjects x raters."""
    counts = np.zeros((len(ratings), CATEGORIES))
    for i, row in enumerate(ratings):
        for v in row:
            if v is not None:
                counts[i, 0 if v else 1] += 1
    return counts


def subject_features(counts: np.ndarray) -> np.ndarray:
    """Per subject: [rated at all, rated twice or more, observed agreement, share per category].

    Summed over subjects these give everything Gwet's coefficients need.
    """
    r = counts.sum(axis=1)
    rated = r >= 1
    twice = r >= 2
    pairs = np.where(twice, r * (r - 1), 1.0)
    agreement = np.where(twice, (counts * (counts - 1)).sum(axis=1) / pairs, 0.0)
    shares = np.where(rated[:, None], counts / np.where(rated, r, 1.0)[:, None], 0.0)
    return np.column_stack([rated, twice, agreement, shares]).astype(float)


def _observed_and_shares(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(all="ignore"):
        observed = sums[..., 2] / sums[..., 1]
        shares = sums[..., 3:] / sums[..., 0:1]
    return observed, shares


def fleiss_from_sums(sums: np.ndarray) -> np.ndarray:
    """Fleiss' kappa (Gwet's generalised form) from summed subject features; NaN if undefined."""
    observed, shares = _observed_and_shares(sums)
    chance = (shares**2).sum(axis=-1)
    with np.errstate(all="ignore"):
        return np.where(np.isclose(chance, 1.0), np.nan, (observed - chance) / (1 - chance))


def ac1_from_sums(sums: np.ndarray) -> np.ndarray:
    """Gwet's AC1 for many raters from summed subject features; NaN if undefined."""
    observed, shares = _observed_and_shares(sums)
    q = shares.shape[-1]
    chance = (shares * (1 - shares)).sum(axis=-1) / (q - 1)
    with np.errstate(all="ignore"):
        return np.where(np.isclose(chance, 1.0), np.nan, (observed - chance) / (1 - chance))


@dataclass(frozen=True)
class Coefficient:
    value: float | None
    observed: float | None  # p_a
    chance: float | None  # p_e
    se: float | None  # Gwet's standard error, conditional on the raters; no clustering
    subjects: int  # rated at least once
    subjects_twice: int  # rated at least twice (the only ones that show agreement)


def _gwet(counts: np.ndarray, kind: str) -> Coefficient:
    """Gwet's estimator and its variance (Handbook, eq. 5.x), for kind "fleiss" or "ac1"."""
    counts = counts[counts.sum(axis=1) >= 1]
    features = subject_features(counts)
    n, n2 = len(counts), int(features[:, 1].sum())
    if n2 == 0:
        return Coefficient(None, None, None, None, n, n2)
    sums = features.sum(axis=0)
    observed, shares = _observed_and_shares(sums)
    q = counts.shape[1]
    if kind == "fleiss":
        chance = float((shares**2).sum())
        chance_i = features[:, 3:] @ shares
    else:
        chance = float((shares * (1 - shares)).sum() / (q - 1))
        chance_i = features[:, 3:] @ (1 - shares) / (q - 1)
    if np.isclose(chance, 1.0):
        return Coefficient(None, float(observed), chance, None, n, n2)
    value = (float(observed) - chance) / (1 - chance)
    # Linearised subject contributions; their spread is the standard error (population
    # of subjects taken as infinite, as irrCAC's default N = Inf).
    own = (n / n2) * (features[:, 2] - chance * features[:, 1]) / (1 - chance)
    own = own - 2 * (1 - value) * (chance_i - chance) / (1 - chance)
    se = float(np.sqrt(((own - value) ** 2).sum() / (n * (n - 1)))) if n > 1 else None
    return Coefficient(value, float(observed), chance, se, n, n2)


def fleiss_generalised(counts: np.ndarray) -> Coefficient:
    return _gwet(counts, "fleiss")


def gwet_ac1_multi(counts: np.ndarray) -> Coefficient:
    return _gwet(counts, "ac1")


def coincidences(counts: np.ndarray) -> np.ndarray:
    """Per subject, Krippendorff's coincidence matrix (flattened q x q): each ordered pair of
    values from two different raters, weighted 1 / (m - 1). Subjects rated once add nothing."""
    m = counts.sum(axis=1)
    usable = m >= 2
    outer = counts[:, :, None] * counts[:, None, :]
    outer = outer - np.eye(counts.shape[1])[None] * counts[:, :, None]
    with np.errstate(all="ignore"):
        matrix = np.where(usable[:, None, None], outer / np.where(usable, m - 1, 1)[:, None, None], 0.0)
    return matrix.reshape(len(counts), counts.shape[1] ** 2)  # explicit: also for no subjects


def alpha_from_coincidences(sums: np.ndarray) -> np.ndarray:
    """Nominal Krippendorff's alpha from summed coincidence matrices; NaN if undefined."""
    q = math.isqrt(sums.shape[-1])
    matrix = sums.reshape(*sums.shape[:-1], q, q)
    totals = matrix.sum(axis=-1)
    n = totals.sum(axis=-1)
    disagree = matrix.sum(axis=(-2, -1)) - np.trace(matrix, axis1=-2, axis2=-1)
    expected = n**2 - (totals**2).sum(axis=-1)
    with np.errstate(all="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * disagree / expected, np.nan)


def nominal_alpha(matrix: np.ndarray) -> float:
    """Krippendorff's alpha, nominal, from a raters x subjects matrix with NaN for no read."""
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
