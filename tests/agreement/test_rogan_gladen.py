"""The Rogan-Gladen correction held to ``judgy`` (its point estimate exactly; its interval,
a plain bootstrap of 20,000 resamples, within a point), and to a hand check."""

import numpy as np
import pytest
from judgy import estimate_success_rate

from app.agreement.rogan_gladen import rogan_gladen


def sample(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.7
    judge = np.where(truth, rng.random(n) < 0.9, rng.random(n) < 0.25)
    unlabelled = rng.random(4000) < 0.68
    return truth.astype(int), judge.astype(int), unlabelled.astype(int)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_it_is_judgy_on_an_unweighted_sample(seed: int) -> None:
    truth, judge, unlabelled = sample(seed)
    np.random.seed(seed)  # judgy draws from numpy's global generator
    value, low, high = estimate_success_rate(truth, judge, unlabelled)
    mine = rogan_gladen(truth.astype(bool), judge.astype(bool), float(unlabelled.mean()))
    assert mine.value == pytest.approx(value, abs=1e-12)
    assert mine.low is not None and mine.high is not None
    assert mine.low == pytest.approx(low, abs=0.01) and mine.high == pytest.approx(high, abs=0.01)


def test_a_hand_check() -> None:
    # 8 edits the readers passed, the judge passed 6 (sensitivity 0.75); 4 they failed, the
    # judge failed 3 (specificity 0.75). Judge's rate on the data set 0.6:
    # (0.6 + 0.75 - 1) / (0.75 + 0.75 - 1) = 0.7.
    readers = [True] * 8 + [False] * 4
    judge = [True] * 6 + [False] * 2 + [False] * 3 + [True]
    assert rogan_gladen(readers, judge, 0.6).value == pytest.approx(0.7)


def test_weights_count_an_edit_as_many() -> None:
    readers = [True, True, False, False]
    judge = [True, False, False, True]
    doubled = rogan_gladen([*readers, True], [*judge, True], 0.6)
    weighted = rogan_gladen(readers, judge, 0.6, weights=[2, 1, 1, 1])
    assert weighted.value == pytest.approx(doubled.value)


def test_a_judge_no_better_than_chance_gives_no_figure() -> None:
    figure = rogan_gladen([True, True, False, False], [True, False, True, False], 0.5)
    assert figure.value is None
