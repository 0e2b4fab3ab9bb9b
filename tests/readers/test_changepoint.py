"""The rank change-point test the known-answer pause rests on: its stated rate holds for a
steady reader at any list length, short ones too, and with tied scores; a drop is found."""

import numpy as np
import pytest

from app.readers.changepoint import MIN_BEFORE, threshold
from app.readers.changepoint import test as changepoint_test


def _rate(known: int, alpha: float, runs: int, seed: int, levels: int | None = None) -> float:
    """A steady reader's scores: any continuous law (``levels``: shares of that many
    questions, so with ties), the test run after every score as the app runs it."""
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(runs):
        scores = rng.random(known) if levels is None else rng.binomial(levels, 0.8, known) / levels
        flagged += changepoint_test(scores, rng.random(known), known, alpha).flagged_at is not None
    return flagged / runs


@pytest.mark.parametrize("known", [6, 7, 8, 10, 30])
def test_a_steady_reader_is_flagged_at_most_at_the_stated_rate_however_short_the_list(
        known: int) -> None:
    """Six scores give G six values, 1/6 each: an interpolated quantile made the bar one of
    them, and a steady reader was flagged in 19 % of lists at a stated 5 %."""
    runs = 3000
    assert _rate(known, 0.05, runs, seed=known) <= 0.05 + 2.5 * (0.05 * 0.95 / runs) ** 0.5


def test_ties_do_not_move_the_rate() -> None:
    runs = 2000
    assert _rate(40, 0.05, runs, seed=3, levels=5) <= 0.05 + 2.5 * (0.05 * 0.95 / runs) ** 0.5


def test_too_few_scores_can_flag_nobody() -> None:
    assert threshold(MIN_BEFORE, 0.05) == float("inf")
    # Six scores: even the most extreme order is reached 1 time in 6, more than 5 %.
    assert threshold(MIN_BEFORE + 1, 0.05) == float("inf")
    scores = np.array([1.0] * MIN_BEFORE + [0.0])
    assert changepoint_test(scores, np.zeros(6), 6, 0.05).flagged_at is None


def test_a_sharp_drop_is_found_after_it_and_not_before() -> None:
    rng = np.random.default_rng(1)
    scores = np.concatenate([rng.uniform(0.8, 1.0, 30), rng.uniform(0.0, 0.5, 10)])
    found = changepoint_test(scores, rng.random(40), 40, 0.05).flagged_at
    assert found is not None and 30 < found <= 36


def test_the_bar_allows_for_its_own_simulation_error() -> None:
    """The bar lets through at most as many simulated lists as keep the 90 % upper bound of
    the rate at alpha: one more would not."""
    from scipy.stats import beta

    from app.readers.changepoint import RUNS, _allowed

    for alpha in (0.05, 0.05 / 3, 0.001):
        count = _allowed(alpha)
        assert beta.ppf(0.9, count + 1, RUNS - count) <= alpha < beta.ppf(0.9, count + 2, RUNS - count - 1)


def test_a_reader_right_on_every_case_is_never_flagged() -> None:
    """Every score equal: the tie draw alone once ranked the last ones lowest (here it is
    made to), and a reader right throughout was flagged as if they had dropped."""
    from app.readers.changepoint import path, sequential_ranks
    from app.readers.changepoint import test as changepoint_test

    scores, ties = np.ones(30), np.linspace(1, 0, 30)  # later ties drawn lower
    found = changepoint_test(scores, ties, 30, 0.05)
    assert path(sequential_ranks(scores, ties))[0].max() >= found.threshold  # ranks alone flag
    assert found.flagged_at is None
    dropped = changepoint_test(np.r_[np.ones(20), np.zeros(10)], ties, 30, 0.05)
    assert dropped.flagged_at is not None


@pytest.mark.parametrize("length", [0, 1, 5, 6, 7, 20, 21, 45, 300])
def test_one_reader_s_path_at_once_is_the_looks_path(length: int) -> None:
    """The observed list's G, every look at once, is what the look-by-look walk finds."""
    from app.readers.changepoint import _observed_path, path, sequential_ranks

    rng = np.random.default_rng(length)
    for _ in range(10):
        x, t = rng.integers(0, 4, length) / 3.0, rng.random(length)  # ties, as shares have
        walked = path(sequential_ranks(x, t))[0] if length else np.zeros(0)
        np.testing.assert_allclose(_observed_path(x, t), walked)


def test_sequential_ranks_count_the_earlier_scores_below_each_ties_by_the_draw() -> None:
    from app.readers.changepoint import RANK_ROWS, sequential_ranks

    rng = np.random.default_rng(5)
    for length in (0, 1, 7, RANK_ROWS, RANK_ROWS + 1, 2 * RANK_ROWS + 37):
        x = rng.integers(0, 4, length).astype(float)  # many ties
        t = rng.random(length)
        by_definition = [int(np.sum((x[:i] < x[i]) | ((x[:i] == x[i]) & (t[:i] < t[i]))))
                         for i in range(length)]
        assert sequential_ranks(x, t).tolist() == by_definition
