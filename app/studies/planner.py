"""How many cases a study needs for a chosen interval half-width.

Agreement is a proportion: n = z^2 p (1 - p) / d^2 cases if cases were independent (Wald;
0.81 and +/-5 points give 237). Edits of one source image are not independent, so n is
multiplied by the design effect: 1 + (m - 1) * ICC for m edits per source image and an
intraclass correlation ICC (Kish 1965), or, with no ICC given, m itself: the conservative
bound that counts each image once.

Cohen's kappa at a given prevalence uses the large-sample variance of kappa for two raters
with equal margins (Bloch and Kraemer 1989), the variance statsmodels' ``cohens_kappa``
reports for such a table (tested).
"""

import math
from dataclasses import asdict, dataclass

from scipy.stats import norm

from app.errors import Invalid

CONFIDENCE = 0.95


class PlanError(Invalid):
    """Values no study can be planned from; the message says which, and ``field`` names the
    planner's input at fault."""


# Bounds of a plausible reader study. A half-width under half a point asks for tens of
# thousands of reads (at agreement 0.5, ±0.005 is 38,415 cases); below that the answer is
# only arithmetic (1e-300 divided by zero, 1e-9 gave 18 digits of cases).
MIN_HALF_WIDTH = 0.005
MAX_HALF_WIDTH = 0.5
MIN_AGREEMENT, MAX_AGREEMENT = 0.01, 0.99
MAX_EDITS_PER_IMAGE = 100


@dataclass(frozen=True)
class Plan:
    agreement: float
    half_width: float
    edits_per_image: float
    icc: float | None
    design_effect: float
    independent_cases: int  # what the formula gives if every case were its own image
    cases: int  # with the design effect
    kappa: float | None = None
    prevalence: float | None = None
    kappa_cases: int | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _z() -> float:
    return float(norm.ppf(1 - (1 - CONFIDENCE) / 2))


def sample_edits_per_image(pool_sizes: list[int], cases: int) -> float:
    """The size-weighted edits per source image expected in a simple random sample of
    ``cases`` from a pool whose images hold ``pool_sizes`` units each: with sampling fraction
    f, an image of c units contributes about c f (1 - f) + (c f)^2 to the sum of squared
    cluster sizes, so the average is (1 - f) + f * sum(c^2) / sum(c). A small sample from a
    large pool rarely takes two edits of one image; a sample of the whole pool takes them all."""
    total = sum(pool_sizes)
    if not total or cases <= 0:
        return 1.0
    share = min(1.0, cases / total)
    return (1 - share) + share * sum(c * c for c in pool_sizes) / total


def design_effect(edits_per_image: float, icc: float | None) -> float:
    if not 1 <= edits_per_image <= MAX_EDITS_PER_IMAGE:
        raise PlanError(f"edits per source image must be between 1 and {MAX_EDITS_PER_IMAGE}",
                        "plan_edits_per_image")
    if icc is not None and not 0 <= icc <= 1:
        raise PlanError("the intraclass correlation (ICC) must be between 0 and 1", "plan_icc")
    if icc is None:
        return edits_per_image
    return 1 + (edits_per_image - 1) * icc


def kappa_variance_unit(kappa: float, prevalence: float) -> float:
    """n * Var(kappa) for two raters with equal margins (Bloch and Kraemer 1989, eq. 9)."""
    share = prevalence * (1 - prevalence)
    return (1 - kappa) * ((1 - kappa) * (1 - 2 * kappa) + kappa * (2 - kappa) / (2 * share))


def plan_cases(agreement: float, half_width: float, *, edits_per_image: float = 1.0,
               icc: float | None = None, kappa: float | None = None,
               prevalence: float | None = None) -> Plan:
    if not MIN_AGREEMENT <= agreement <= MAX_AGREEMENT:
        raise PlanError(f"the expected agreement must be between {MIN_AGREEMENT} and "
                        f"{MAX_AGREEMENT}", "plan_agreement")
    if not MIN_HALF_WIDTH <= half_width < MAX_HALF_WIDTH:
        raise PlanError(f"the half-width must be at least {MIN_HALF_WIDTH} and under "
                        f"{MAX_HALF_WIDTH} (e.g. 0.05 for ±5 points)", "plan_half_width")
    effect = design_effect(edits_per_image, icc)
    z = _z()
    # Rounded up once, at the end: ceil(ceil(n) * effect) could ask for one case more
    # (236.48 x 1.6 needs 379, not ceil(237 x 1.6) = 380).
    exact = z**2 * agreement * (1 - agreement) / half_width**2
    independent = math.ceil(exact)
    kappa_cases = None
    if kappa is not None or prevalence is not None:
        if kappa is None or prevalence is None:
            raise PlanError("plan kappa with both an expected kappa and a prevalence",
                            "plan_kappa" if kappa is None else "plan_prevalence")
        if not MIN_AGREEMENT <= prevalence <= MAX_AGREEMENT:
            raise PlanError(f"the prevalence (share of edits that pass) must be between "
                            f"{MIN_AGREEMENT} and {MAX_AGREEMENT}", "plan_prevalence")
        if not -0.99 <= kappa <= 0.99:
            raise PlanError("the expected kappa must be between -0.99 and 0.99", "plan_kappa")
        unit = kappa_variance_unit(kappa, prevalence)
        if unit <= 0:
            raise PlanError("that kappa is impossible at that prevalence", "plan_kappa")
        kappa_cases = math.ceil(z**2 * unit / half_width**2 * effect)
    return Plan(agreement, half_width, edits_per_image, icc, effect, independent,
                math.ceil(exact * effect), kappa, prevalence, kappa_cases)

