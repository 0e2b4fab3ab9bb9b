"""Agreement on one binary question (pass / fail) between two raters, from well-kept libraries.

Percent agreement with a Wilson interval, Cohen's kappa with its asymptotic interval
(statsmodels), PABAK, Gwet's AC1, the 2x2 table, "too strict" and "too lenient" shares, and
McNemar's exact test. Missing answers ("cannot assess", no verdict) are counted and left out,
never read as a fail.
"""

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

Vote = bool | None
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval and the n it rests on; value None when undefined."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0

    def as_dict(self) -> dict[str, float | int | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def wilson(successes: int, n: int) -> Estimate:
    if n == 0:
        return Estimate(None, n=0)
    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")
    # Rounding noise (3e-18 for 0 of 100) would print as a non-zero bound.
    return Estimate(successes / n, max(0.0, round(float(low), 12)), min(1.0, round(float(high), 12)), n)


@dataclass(frozen=True)
class Table2x2:
    """Rows: rater A passes / fails; columns: rater B passes / fails."""

    both_pass: int
    a_pass_b_fail: int
    a_fail_b_pass: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.a_pass_b_fail + self.a_fail_b_pass + self.both_fail

    def array(self) -> np.ndarray:
        return np.array([[self.both_pass, self.a_pass_b_fail],
                         [self.a_fail_b_pass, self.both_fail]], dtype=float)

    def as_dict(self) -> dict[str, int]:
        return {"both_pass": self.both_pass, "a_pass_b_fail": self.a_pass_b_fail,
                "a_fail_b_pass": self.a_fail_b_pass, "both_fail": self.both_fail}


def cross(a: Sequence[Vote], b: Sequence[Vote]) -> tuple[Table2x2, int]:
    """The table of the pairs both raters answered, and how many pairs were left out."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same cases")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    table = Table2x2(sum(1 for x, y in pairs if x and y), sum(1 for x, y in pairs if x and not y),
                     sum(1 for x, y in pairs if not x and y), sum(1 for x, y in pairs if not x and not y))
    return table, len(a) - len(pairs)


def kappa(table: np.ndarray) -> Estimate:
    """Cohen's kappa with its 95 % interval (statsmodels); None when chance agreement is 1,
    e.g. when both raters used a single category."""
    n = int(table.sum())
    if n == 0:
        return Estimate(None, n=0)
    totals = table.sum()
    expected = float((table.sum(0) * table.sum(1)).sum() / totals**2)
    if math.isclose(expected, 1.0):
        return Estimate(None, n=n)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # a zero variance is handled below
        result = cohens_kappa(table)  # its interval is the 95 % one
    one_category = bool((table.sum(0) == 0).any() or (table.sum(1) == 0).any())
    if one_category or not (math.isfinite(result.std_kappa) and result.std_kappa > 0):
        # One rater used a single category: kappa is 0 by construction, and its asymptotic
        # interval collapses to a point that would look like certainty.
        return Estimate(float(result.kappa), None, None, n)
    return Estimate(float(result.kappa), float(result.kappa_low), float(result.kappa_upp), n)


def gwet_ac1(table: np.ndarray) -> float | None:
    """Gwet's AC1 for two raters from a q x q table (Gwet 2008). No maintained Python
    implementation fits (irrCAC's port calls itself a work in progress), so it is this small
    function, tested against the published value for irrCAC's cont3x3abstractors."""
    n = float(table.sum())
    q = table.shape[0]
    if n == 0 or q < 2:
        return None
    observed = float(np.trace(table)) / n
    share = (table.sum(0) + table.sum(1)) / (2 * n)
    chance = float((share * (1 - share)).sum()) / (q - 1)
    return (observed - chance) / (1 - chance) if not math.isclose(chance, 1.0) else None


@dataclass(frozen=True)
class PairAgreement:
    """Rater A (e.g. the judge) against rater B (e.g. the reference), on one question."""

    table: Table2x2
    left_out: int  # pairs where either answer was missing or "cannot assess"
    agreement: Estimate
    kappa: Estimate
    pabak: float | None
    ac1: float | None
    # A fails what B passes: for the judge against the reference, the judge is "too strict".
    a_stricter: Estimate
    a_more_lenient: Estimate
    a_stricter_given_b_pass: Estimate
    a_more_lenient_given_b_fail: Estimate
    mcnemar_p: float | None

    def as_dict(self) -> dict[str, object]:
        return {"table": self.table.as_dict(), "n": self.table.n, "left_out": self.left_out,
                "agreement": self.agreement.as_dict(), "kappa": self.kappa.as_dict(),
                "pabak": self.pabak, "ac1": self.ac1,
                "a_stricter": self.a_stricter.as_dict(),
                "a_more_lenient": self.a_more_lenient.as_dict(),
                "a_stricter_given_b_pass": self.a_stricter_given_b_pass.as_dict(),
                "a_more_lenient_given_b_fail": self.a_more_lenient_given_b_fail.as_dict(),
                "mcnemar_p": self.mcnemar_p}


def compare(a: Sequence[Vote], b: Sequence[Vote]) -> PairAgreement:
    table, left_out = cross(a, b)
    n = table.n
    agree = table.both_pass + table.both_fail
    array = table.array()
    discordant = table.a_pass_b_fail + table.a_fail_b_pass
    # McNemar's exact test is a binomial test on the discordant pairs; with none it says nothing.
    p = float(mcnemar(array, exact=True).pvalue) if discordant else None
    return PairAgreement(
        table=table, left_out=left_out, agreement=wilson(agree, n), kappa=kappa(array),
        pabak=2 * agree / n - 1 if n else None, ac1=gwet_ac1(array) if n else None,
        a_stricter=wilson(table.a_fail_b_pass, n),
        a_more_lenient=wilson(table.a_pass_b_fail, n),
        a_stricter_given_b_pass=wilson(table.a_fail_b_pass, table.both_pass + table.a_fail_b_pass),
        a_more_lenient_given_b_fail=wilson(table.a_pass_b_fail, table.a_pass_b_fail + table.both_fail),
        mcnemar_p=p,
    )
