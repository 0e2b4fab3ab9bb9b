"""ROC figures: the area against the published example and scikit-learn, rates by hand."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from app.agreement.roc import area, best_threshold, curve, rates, reader_areas, reliability

# Hanley and McNeil (1982), Radiology 143:29, table 1: 109 CT images rated 1 (definitely
# normal) to 5 (definitely abnormal); 58 normal, 51 abnormal. Their area: 0.893.
NORMAL = [33, 6, 6, 11, 2]
ABNORMAL = [3, 2, 2, 11, 33]


def _ratings() -> tuple[np.ndarray, np.ndarray]:
    truth = np.array([0] * sum(NORMAL) + [1] * sum(ABNORMAL))
    score = np.array([r for r, n in enumerate(NORMAL, 1) for _ in range(n)]
                     + [r for r, n in enumerate(ABNORMAL, 1) for _ in range(n)], dtype=float)
    return truth, score


def test_the_area_of_hanley_and_mcneils_ct_ratings() -> None:
    truth, score = _ratings()
    figure = area(truth == 1, score)
    assert figure.value == pytest.approx(2642 / (51 * 58), abs=1e-12)
    assert round(figure.value or 0, 3) == 0.893
    assert figure.low is not None and figure.high is not None
    # Their standard error is 0.0325 by their formula: a 95 % interval about +-0.064 wide.
    assert 0.8 < figure.low < figure.value < figure.high < 0.96
    assert 0.10 < figure.high - figure.low < 0.16


def test_the_weighted_area_is_scikit_learns() -> None:
    rng = np.random.default_rng(3)
    truth = rng.random(400) < 0.6
    score = np.round(rng.normal(truth * 0.8, 1.0), 1)  # rounded: many ties
    weights = rng.choice([1.0, 2.5, 7.0], 400)
    expected = roc_auc_score(truth, score, sample_weight=weights)
    assert area(truth, score, weights=weights).value == pytest.approx(expected, abs=1e-12)
    assert area(truth, score).value == pytest.approx(roc_auc_score(truth, score), abs=1e-12)


def test_clusters_widen_the_interval() -> None:
    """Ten copies of each edit under one source image are one edit's evidence, not ten."""
    truth, score = _ratings()
    alone = area(truth == 1, score)
    copies = area(np.repeat(truth == 1, 10), np.repeat(score, 10))
    clustered = area(np.repeat(truth == 1, 10), np.repeat(score, 10),
                     clusters=np.repeat(np.arange(len(truth)), 10))
    width = lambda f: (f.high or 0) - (f.low or 0)  # noqa: E731
    assert width(copies) < 0.5 * width(alone)
    assert width(clustered) == pytest.approx(width(alone), rel=0.15)


def test_one_class_has_no_area_and_no_curve() -> None:
    assert area([True, True, True], [0.1, 0.5, 0.9]).value is None
    assert curve([True, True, True], [0.1, 0.5, 0.9]) == []


def test_the_curve_and_the_best_threshold() -> None:
    truth, score = _ratings()
    points = curve(truth == 1, score)
    assert (points[0].false_positive_rate, points[0].true_positive_rate) == (0.0, 0.0)
    assert (points[-1].false_positive_rate, points[-1].true_positive_rate) == (1.0, 1.0)
    best = best_threshold(points)
    assert best is not None
    # Youden by hand: rating >= 4 passes 44 of 51 abnormal and fails 45 of 58 normal
    # (J = 0.639); >= 3 gives 46/51 and 39/58 (J = 0.574); >= 5 gives 33/51 and 56/58 (0.612).
    assert best.threshold == 4.0
    assert best.true_positive_rate == pytest.approx(44 / 51)
    assert best.false_positive_rate == pytest.approx(13 / 58)


def test_rates_by_hand() -> None:
    truth = [True, True, True, False, False, True, False, False]
    decision = [True, True, False, False, True, True, False, False]
    weights = [1, 1, 2, 1, 3, 1, 1, 1]
    figures = rates(truth, decision, weights=weights)
    assert figures["sensitivity"].value == pytest.approx(3 / 5)  # weights 1+1+1 of 1+1+2+1
    assert figures["specificity"].value == pytest.approx(3 / 6)  # 1+1+1 of 1+3+1+1
    assert figures["agreement"].value == pytest.approx(6 / 11)
    assert figures["sensitivity"].n == 4 and figures["specificity"].n == 4
    none_failed = rates([True, True], [True, False])
    assert none_failed["specificity"].value is None and none_failed["specificity"].n == 0


def test_reliability_bins() -> None:
    truth = [True, False, True, True, False, True]
    score = [0.05, 0.08, 0.55, 0.58, 0.95, 1.0]
    weights = [1, 3, 1, 1, 1, 1]
    bins = reliability(truth, score, weights=weights)
    assert [(b.low, b.n) for b in bins] == [(0.0, 2), (0.5, 2), (0.9, 2)]
    assert bins[0].mean_score == pytest.approx((0.05 + 3 * 0.08) / 4)
    assert bins[0].passed == pytest.approx(1 / 4)
    assert bins[2].passed == pytest.approx(0.5)  # 1.0 falls in the last, closed bin


def test_each_readers_area_and_their_mean() -> None:
    truth, score = _ratings()
    rng = np.random.default_rng(11)
    second = np.clip(score + rng.integers(-1, 2, len(score)), 1, 5).astype(float)
    second[:10] = np.nan  # the second reader skipped ten cases
    figures = reader_areas(truth == 1, {"dr-a": score, "dr-b": second})
    assert figures["dr-a"].value == pytest.approx(2642 / (51 * 58), abs=1e-12)
    read = ~np.isnan(second)
    assert figures["dr-b"].value == pytest.approx(roc_auc_score(truth[read], second[read]), abs=1e-12)
    mean = figures["readers' mean"]
    assert mean.value == pytest.approx((figures["dr-a"].value + figures["dr-b"].value) / 2)
    assert mean.low is not None and mean.low < mean.value < (mean.high or 0)
