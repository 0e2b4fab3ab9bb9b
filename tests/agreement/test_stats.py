"""The two-rater figures, against published values where they exist."""

import numpy as np
import pytest

from app.agreement.stats import compare, gwet_ac1, kappa, wilson

# Gwet's irrCAC data set cont3x3abstractors and its published results (irrCAC vignette).
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]], dtype=float)


def test_cohens_kappa_matches_the_published_value() -> None:
    estimate = kappa(ABSTRACTORS)
    assert estimate.value == pytest.approx(0.7964094, abs=1e-7)
    assert estimate.n == 100 and estimate.low is not None and estimate.high is not None
    # irrCAC prints (0.68, 0.913) from the same standard error, 0.05891072.
    assert estimate.low == pytest.approx(0.7964094 - 1.959964 * 0.05891072, abs=1e-4)


def test_gwet_ac1_matches_the_published_value() -> None:
    assert gwet_ac1(ABSTRACTORS) == pytest.approx(0.8493305, abs=1e-7)


def test_wilson_interval_matches_newcombe_1998() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, Table I: 81/263 -> 0.2553 to 0.3662.
    estimate = wilson(81, 263)
    assert (estimate.low, estimate.high) == (pytest.approx(0.2553, abs=1e-4),
                                             pytest.approx(0.3662, abs=1e-4))
    assert wilson(0, 0).value is None


def test_the_table_and_the_strict_and_lenient_shares() -> None:
    judge = [True] * 40 + [False] * 6 + [True] * 4 + [False] * 10
    reference = [True] * 40 + [True] * 6 + [False] * 4 + [False] * 10
    result = compare(judge, reference)
    assert result.table.as_dict() == {"both_pass": 40, "a_pass_b_fail": 4, "a_fail_b_pass": 6,
                                      "both_fail": 10}
    assert result.agreement.value == pytest.approx(50 / 60)
    assert result.pabak == pytest.approx(2 * 50 / 60 - 1)
    # Too strict: the judge fails what the reference passes; as a share of all, and of passes.
    assert result.a_stricter.value == pytest.approx(6 / 60)
    assert result.a_stricter_given_b_pass.value == pytest.approx(6 / 46)
    assert result.a_more_lenient.value == pytest.approx(4 / 60)
    assert result.a_more_lenient_given_b_fail.value == pytest.approx(4 / 14)
    # McNemar's exact test: a two-sided binomial test of 4 against 6 discordant pairs.
    assert result.mcnemar_p == pytest.approx(0.75390625)


def test_cannot_assess_is_left_out_never_counted_as_a_fail() -> None:
    result = compare([True, None, False, True], [True, False, None, False])
    assert result.table.n == 2 and result.left_out == 2
    assert result.table.as_dict()["both_fail"] == 0


def test_undefined_figures_say_so() -> None:
    same = compare([True] * 5, [True] * 5)
    assert same.kappa.value is None and same.mcnemar_p is None and same.agreement.value == 1
    # A judge that passes everything: kappa is 0 by construction, with no interval to show.
    constant = compare([True] * 6, [True, True, True, False, False, True])
    assert constant.kappa.value == 0 and constant.kappa.low is None
    empty = compare([None], [True])
    assert empty.agreement.value is None and empty.pabak is None and empty.ac1 is None


def test_a_judge_that_passes_everything_has_no_kappa_interval() -> None:
    """Once shown as "-0.00 to 0.00": a rounding-size variance passed for certainty."""
    result = compare([True] * 100, [True] * 76 + [False] * 24)
    assert result.kappa.value == 0 and result.kappa.low is None and result.kappa.high is None
