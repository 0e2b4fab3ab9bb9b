"""The drift test on a reader's known-answer cases: its false-alarm rate holds on steady
readers it was not calibrated on, and a marked drop is flagged soon after it happens."""

import numpy as np

from app.readers.drift import ALPHA, MIN_CASES, drift, steady_answers

QUESTIONS, PRACTICE, HORIZON = 5, 20, 40


def flagged(answers: np.ndarray, practice: np.ndarray) -> list[int | None]:
    asked = np.full(answers.shape[1], QUESTIONS, dtype=float)
    return [drift(answers[r], asked, practice[r], PRACTICE * QUESTIONS, HORIZON, QUESTIONS,
                  PRACTICE).flagged_at for r in range(len(answers))]


def test_steady_readers_are_flagged_at_the_stated_rate_at_most() -> None:
    """400 steady readers at 0.9, drawn with a seed the threshold never saw."""
    rng = np.random.default_rng(2026)
    practice = steady_answers(rng, 0.9, PRACTICE, QUESTIONS, 400).sum(axis=1)
    answers = steady_answers(rng, 0.9, HORIZON, QUESTIONS, 400)
    share = np.mean([f is not None for f in flagged(answers, practice)])
    assert share <= ALPHA + 0.03  # the rate, and the simulation's own error


def test_a_reader_who_stops_looking_is_flagged_within_ten_cases() -> None:
    """From 0.9 to a coin toss after 10 known-answer cases."""
    rng = np.random.default_rng(7)
    practice = steady_answers(rng, 0.9, PRACTICE, QUESTIONS, 100).sum(axis=1)
    answers = np.concatenate([steady_answers(rng, 0.9, 10, QUESTIONS, 100),
                              steady_answers(rng, 0.5, 30, QUESTIONS, 100)], axis=1)
    at = flagged(answers, practice)
    assert np.mean([f is not None and 10 < f <= 20 for f in at]) >= 0.9


def test_a_reader_who_falls_apart_is_flagged_however_far_they_fall() -> None:
    """The bar is set at the baseline the reader is measured against, never at an accuracy
    the drop itself pulls down: a reader who gets every answer of 8 known-answer cases wrong
    after a good practice of four cases is flagged at the fifth, the first case a flag may
    come (the bar once rose as they fell, and such a reader went unflagged)."""
    right = np.zeros(8)
    asked = np.full(8, 2.0)
    found = drift(right, asked, practice_right=8, practice_asked=8, horizon=8, questions=2,
                  practice_cases=4)
    assert found.flagged_at == MIN_CASES


def test_a_reader_who_differs_from_the_start_has_not_drifted() -> None:
    """No practice: the first GUARD cases make the baseline. A reader at half right on every
    one of them and after is not flagged (there is no drop); a reader right on them and wrong
    after is."""
    asked = np.full(30, 5.0)
    steady_but_poor = np.tile([2.0, 3.0], 15)
    assert drift(steady_but_poor, asked, 0, 0, horizon=30, questions=5,
                 practice_cases=0).flagged_at is None
    falling = np.concatenate([np.full(12, 5.0), np.zeros(18)])
    at = drift(falling, asked, 0, 0, horizon=30, questions=5, practice_cases=0).flagged_at
    assert at is not None and 12 < at <= 16


def test_no_reader_is_flagged_on_fewer_than_five_known_answer_cases() -> None:
    """One bad case, however bad, is no drift: a careful reader's hard case pauses nobody."""
    found = drift(np.zeros(4), np.full(4, 5.0), practice_right=90, practice_asked=100, horizon=40,
                  questions=5, practice_cases=20)
    assert found.flagged_at is None
    assert drift(np.zeros(2), np.full(2, 5.0), 90, 100, horizon=2, questions=5,
                 practice_cases=20).threshold == float("inf")


def test_a_list_too_short_for_a_baseline_flags_nobody() -> None:
    """No practice and eight known-answer cases: no baseline ever forms, so nobody is
    flagged, however they answer (a bar of 0 once flagged a reader right on every one)."""
    for right in (np.full(8, 2.0), np.zeros(8)):
        found = drift(right, np.full(8, 2.0), 0, 0, horizon=8, questions=2, practice_cases=0)
        assert found.flagged_at is None
