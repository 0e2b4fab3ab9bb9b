"""A study's targets: the half-width of the anytime-valid interval wanted per endpoint, at
which the study may stop (app/agreement/monitoring.py watches them).

A target is checked when the study is made: one that reading every case of the sample is not
expected to reach even if each case were a source image of its own (at the anticipated share:
the planner's agreement, or the paper's figures) is refused, before anyone reads. Clustering
only widens the interval, so a refused target is out of reach for certain; an accepted one
may still be missed, which the study page projects as reading goes.
"""

from app.confidence_sequence import expected_half_width, units_for_target
from app.errors import Invalid

# endpoint -> what the form calls it, and the paper's figure on 100 chest X-ray edits
# (81 % agreement, too strict 12 %, too lenient 7 %), the share anticipated without a plan.
ENDPOINTS: dict[str, tuple[str, float]] = {
    "agreement": ("agreement", 0.81),
    "too_strict": ("too strict", 0.12),
    "too_lenient": ("too lenient", 0.07),
}
MAX_TARGET = 0.5
# What the new-study form's planner offers first: the paper's agreement, to within 5 points.
PLANNED_AGREEMENT = ENDPOINTS["agreement"][1]
PLANNED_HALF_WIDTH = 0.05


def field_of(endpoint: str) -> str:
    return f"target_{endpoint}"


def check_targets(targets: dict[str, float], *, cases: int,
                  anticipated_agreement: float | None = None) -> None:
    """Refuses a target of 0 or less, above MAX_TARGET, or out of reach of ``cases`` cases;
    the error names the form field."""
    for endpoint, target in targets.items():
        if endpoint not in ENDPOINTS:
            raise Invalid(f"no endpoint {endpoint!r}; targets are for {', '.join(ENDPOINTS)}")
        name, paper = ENDPOINTS[endpoint]
        if not 0 < target <= MAX_TARGET:
            raise Invalid(f"the target for {name} is a half-width above 0 and at most "
                          f"{MAX_TARGET:g} (not {target:g})", field=field_of(endpoint))
        share = anticipated_agreement if endpoint == "agreement" and anticipated_agreement else paper
        expected = expected_half_width(share, cases)
        if expected > target:
            raise Invalid(
                f"± {target:g} on {name} is out of reach: reading all {cases} cases of this "
                f"sample is expected to give about ± {expected:.3f} at best (anytime-valid, at "
                f"{share:.0%}); ask for a wider target or more cases", field=field_of(endpoint))


def units_to_meet(targets: dict[str, float], *, anticipated_agreement: float | None = None,
                  most: int = 100_000) -> int | None:
    """The units of one case each at which every target is expected to be met, at the
    anticipated shares (as ``check_targets`` takes them); None without a target. What a study
    that stops at its targets tunes its sequence's bets to."""
    needed = []
    for endpoint, target in targets.items():
        if endpoint in ENDPOINTS and 0 < target <= MAX_TARGET:
            paper = ENDPOINTS[endpoint][1]
            share = anticipated_agreement if endpoint == "agreement" and anticipated_agreement else paper
            needed.append(units_for_target(round(share, 4), round(target, 4), most=most))
    return max(needed) if needed else None
