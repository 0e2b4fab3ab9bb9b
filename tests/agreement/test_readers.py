"""Agreement among readers: statsmodels' Fleiss kappa and the krippendorff package."""

import numpy as np
import pytest

from app.agreement.readers import among_readers, fleiss_from_counts, nominal_alpha


def test_krippendorff_reproduces_the_published_nominal_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 0.743.
    nan = np.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])
    # The paper prints 0.743 (rounded); the exact value is 0.74342.
    assert nominal_alpha(data) == pytest.approx(0.7434, abs=1e-4)


def test_fleiss_reproduces_the_fleiss_1971_table() -> None:
    # Fleiss (1971), as in the statsmodels and Wikipedia examples: 10 cases, 14 raters, 0.2099.
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
                      [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
                      [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_from_counts(table) == pytest.approx(0.2099, abs=1e-4)


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
