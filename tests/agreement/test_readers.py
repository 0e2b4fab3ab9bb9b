"""Agreement among readers: statsmodels' Fleiss kappa and the krippendorff package."""

import krippendorff
import numpy as np
import pytest

from app.agreement.readers import among_readers


def test_krippendorff_reproduces_the_published_nominal_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": nominal alpha 0.743.
    nan = np.nan
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert alpha == pytest.approx(0.743, abs=1e-3)


def test_perfect_agreement_and_missing_reads() -> None:
    votes = {"a": [True, False, True, None], "b": [True, False, True, True],
             "c": [True, False, True, True]}
    result = among_readers(votes)
    assert result.fleiss == pytest.approx(1.0) and result.fleiss_n == 3  # case 4 is incomplete
    assert result.alpha == pytest.approx(1.0) and result.alpha_n == 4  # two answers suffice
    assert set(result.pairs) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert result.pairs[("a", "b")].left_out == 1


def test_two_readers_fleiss_equals_scotts_pi() -> None:
    a = [True] * 30 + [False] * 10 + [True] * 5 + [False] * 5
    b = [True] * 30 + [False] * 10 + [False] * 5 + [True] * 5
    result = among_readers({"a": a, "b": b})
    observed = 40 / 50
    share = (35 + 35) / 100  # passes over both raters' answers
    chance = share**2 + (1 - share) ** 2
    assert result.fleiss == pytest.approx((observed - chance) / (1 - chance))
