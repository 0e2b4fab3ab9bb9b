"""The human ceiling's sentence says no more than the interval of the difference supports:
"within" only inside the equivalence margin, and no conclusion from too few cases."""

import pytest

from app.agreement.ceiling import EQUIVALENCE_MARGIN, MIN_CASES, MIN_IMAGES, verdict
from app.agreement.resample import Figure


def difference(low: float, high: float, n: int = 100, clusters: int = 50) -> Figure:
    return Figure((low + high) / 2, low, high, n, clusters)


@pytest.mark.parametrize(("low", "high", "said"), [
    (-0.12, -0.01, "the judge is below the readers' agreement"),
    (0.01, 0.09, "the judge is above the readers' agreement"),
    (-0.04, 0.03, "the judge is within the readers' agreement with each other (margin ± 0.05)"),
    # Holds 0, reaches past the margin: absence of evidence, not equivalence.
    (-0.09, 0.02, "inconclusive"),
    (-0.03, 0.11, "inconclusive"),
])
def test_within_needs_the_whole_interval_inside_the_margin(low: float, high: float, said: str) -> None:
    assert EQUIVALENCE_MARGIN == 0.05
    assert verdict(difference(low, high)).startswith(said)


def test_no_conclusion_from_a_handful_of_cases() -> None:
    """9 cases per reader once gave "50.0 % 50.0-50.0: within the readers' agreement"."""
    few = verdict(difference(0.0, 0.0, n=9, clusters=9))
    assert few.startswith("too few cases to compare (n = 9 cases, 9 source images")
    assert verdict(difference(-0.01, 0.01, n=MIN_CASES, clusters=MIN_IMAGES - 1)).startswith("too few")
    assert verdict(difference(-0.01, 0.01, n=MIN_CASES, clusters=MIN_IMAGES)).startswith(
        "the judge is within")
