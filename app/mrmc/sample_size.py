"""How many readers and cases a study needs, from a pilot's Obuchowski-Rockette variance
components: Hillis, Obuchowski & Berbaum, "Power estimation for multireader ROC methods",
Academic Radiology 18(2), 2011, equation 10 (random readers and cases), with RJafroc's
``SsPowerGivenJK`` / ``SsSampleSizeKGivenJ`` conventions for fixed readers (a chi-square
test) and fixed cases.

Two shapes of pilot:
- two modalities (``Pilot.from_or``): the OR components of an ``OrResult``;
- one figure per reader, or one difference per reader (``Pilot.single``): a panel's mean, or
  the panel's mean advantage over a standalone algorithm. Its error variance and covariance
  are those of the per-reader values' jackknife. The single analysis of the differences
  psi_j = A_j - B_j has ms_r(psi) = 2 MS(T*R), Var(psi) = 2 (Var - Cov1) and
  Cov2(psi) = 2 (Cov2 - Cov3), so both shapes give the same power on the same data (checked
  in tests against RJafroc's published values on Van Dyke et al.).

The pilot's covariances scale with 1/K: a study of K cases has K*/K of the pilot's.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from app.mrmc.orh import ALPHA, OrResult, jackknife_covariances, spread

MOST_CASES = 100_000  # a search for cases stops here: past it, readers are what is short


@dataclass(frozen=True)
class Pilot:
    """The components of one contrast: the difference of two modalities, or a single figure
    (``var_tr`` then stands for the reader variance of that figure, halved, so the formulas
    of the two-modality case hold; see ``single``)."""

    k_star: int  # the pilot's cases (or case clusters)
    var_tr: float
    var: float  # Var(Error) - Cov1, the part that does not cancel between readers
    cov: float  # max(Cov2 - Cov3, 0)
    effect: float  # the pilot's observed difference

    @classmethod
    def from_or(cls, result: OrResult) -> "Pilot":
        c = result.covariances
        effect = float(result.auc[0].mean() - result.auc[1].mean()) if len(result.modalities) > 1 else 0.0
        # Hillis, Obuchowski & Berbaum 2011, equation 9, as RJafroc computes it: the max keeps
        # a negative Cov2 - Cov3 out, where the Iowa software's Var(T*R) (our report's, as it
        # prints it) lets it lower the estimate.
        var_tr = result.ms_tr - c.var + c.cov1 + max(c.cov2 - c.cov3, 0.0)
        return cls(result.cases, max(var_tr, 0.0), c.var - c.cov1, max(c.cov2 - c.cov3, 0.0),
                   effect)

    @classmethod
    def single(cls, values: np.ndarray, jack: np.ndarray) -> "Pilot":
        """From one value per reader and its leave-one-case-out values (readers x cases).
        The figures of a difference psi are twice a two-modality study's, so each is halved
        here and the two-modality formulas apply unchanged."""
        _, cov = jackknife_covariances(jack[None, :, :])
        ms_r = spread(values)
        var_r = ms_r - cov.var + max(cov.cov2, 0.0)  # equation 9, as in from_or
        return cls(jack.shape[1], max(var_r, 0.0) / 2, cov.var / 2, max(cov.cov2, 0.0) / 2,
                   float(values.mean()))


@dataclass(frozen=True)
class Power:
    readers: int
    cases: int
    effect: float
    power: float
    ddf: float | None  # None: the chi-square test of fixed readers
    ncp: float
    half_width: float  # the expected half-width of the 95 % interval of the difference


def power(pilot: Pilot, readers: int, cases: int, effect: float | None = None,
          analysis: str = "rrrc", alpha: float = ALPHA) -> Power:
    """The power of a study of ``readers`` x ``cases`` to find ``effect`` (default: the
    pilot's own) at level ``alpha``, in one of the three analyses."""
    d = pilot.effect if effect is None else effect
    scale = pilot.k_star / cases
    spread = scale * (pilot.var + (readers - 1) * pilot.cov)
    if analysis == "rrrc":
        den = pilot.var_tr + spread
        # The readers' expected mean square; at 0 (readers who never differ) Hillis's df is
        # unbounded and the test is a z test.
        spread_r = pilot.var_tr + scale * (pilot.var - pilot.cov)
        ddf: float | None = den ** 2 / (spread_r ** 2 / (readers - 1)) if spread_r > 0 else float("inf")
    elif analysis == "frrc":
        den, ddf = spread, None
    elif analysis == "rrfc":
        den, ddf = pilot.var_tr + scale * (pilot.var - pilot.cov), readers - 1
    else:
        raise ValueError(f"no analysis {analysis!r}: rrrc, frrc or rrfc")
    if den <= 0:
        raise ValueError("the pilot has no variance: it predicts no study's precision")
    ncp = d ** 2 * readers / 2 / den
    se = float(np.sqrt(2 * den / readers))
    if ddf is None or np.isinf(ddf):  # F(1, infinity) is chi-square(1)
        found = alpha if ncp == 0 else float(stats.ncx2.sf(stats.chi2.ppf(1 - alpha, 1), 1, ncp))
        half = float(stats.norm.ppf(1 - alpha / 2)) * se
    else:
        # No effect: the power is the test's size. SciPy's non-central F gives -0.95 at a
        # non-centrality of exactly 0.
        found = alpha if ncp == 0 else float(stats.ncf.sf(stats.f.ppf(1 - alpha, 1, ddf), 1,
                                                           ddf, ncp))
        half = float(stats.t.ppf(1 - alpha / 2, ddf)) * se
    return Power(readers, cases, d, found, ddf, ncp, half)


def cases_for_power(pilot: Pilot, readers: int, effect: float | None = None, target: float = 0.8,
                    analysis: str = "rrrc", alpha: float = ALPHA) -> Power | None:
    """The fewest cases (two or more) that reach ``target`` power with ``readers``, as
    RJafroc's SsSampleSizeKGivenJ finds them; None when no number of cases will, because
    the readers' own variance alone is too large."""
    if power(pilot, readers, MOST_CASES, effect, analysis, alpha).power < target:
        return None
    low, high = 2, MOST_CASES  # power grows with cases: the first K that reaches it
    while low < high:
        middle = (low + high) // 2
        if power(pilot, readers, middle, effect, analysis, alpha).power >= target:
            high = middle
        else:
            low = middle + 1
    return power(pilot, readers, low, effect, analysis, alpha)


def cases_for_width(pilot: Pilot, readers: int, half_width: float,
                    analysis: str = "rrrc", alpha: float = ALPHA) -> Power | None:
    """The fewest cases whose expected 95 % half-width is at most ``half_width``; None when
    no number of cases reaches it with these readers."""
    if power(pilot, readers, MOST_CASES, 0.0, analysis, alpha).half_width > half_width:
        return None
    low, high = 2, MOST_CASES
    while low < high:
        middle = (low + high) // 2
        if power(pilot, readers, middle, 0.0, analysis, alpha).half_width <= half_width:
            high = middle
        else:
            low = middle + 1
    return power(pilot, readers, low, 0.0, analysis, alpha)


READER_COUNTS = (2, 3, 4, 5, 6, 8, 10, 15, 20)


def table(pilot: Pilot, *, effect: float | None = None, target: float = 0.8,
          half_width: float | None = None, readers: tuple[int, ...] = READER_COUNTS
          ) -> list[tuple[int, Power | None]]:
    """For each number of readers, the fewest cases for ``target`` power at ``effect`` (or,
    given ``half_width``, for that precision); None where none suffices."""
    if pilot.var_tr + pilot.var + pilot.cov <= 0:
        return []  # a pilot with no variance at all predicts nothing
    if half_width is not None:
        return [(j, cases_for_width(pilot, j, half_width)) for j in readers]
    return [(j, cases_for_power(pilot, j, effect, target)) for j in readers]
