"""A sequential test for a drop in a reader's accuracy on known-answer cases.

Each known-answer case a reader answers gives, per question, right or wrong. The test is a
self-starting CUSUM (Page, Biometrika 1954; Hawkins, "Self-starting CUSUM charts for location
and scale", The Statistician 1987) for a Bernoulli rate falling by DROP: before each case,
the reader's baseline p0 is their accuracy on every known-answer answer so far except the
last GUARD cases (their practice included), and after it S = max(0, S + r log(p1/p0) +
w log((1-p1)/(1-p0))), with r right and w wrong answers and p1 = p0 - DROP. The reader is
flagged when S reaches h, from their MIN_CASES-th known-answer case on. Learning the
baseline as the study goes keeps a reader with a good or a poor day from being judged by a
short practice; the guard keeps a fresh drop out of the baseline it is measured against.
Without practice the test starts once GUARD cases stand behind the baseline: a reader who
differs from the start has not drifted (their accuracy table says how they read).

h is set by simulation for a stated false-alarm rate: a steady reader at p0 (estimated from
``practice`` cases as the app estimates it), answering the questions of ``horizon``
known-answer cases, answers of one case sharing a random effect (a hard case is hard on
every question), is flagged with probability ``alpha`` at most: the (1 - alpha) quantile of
the largest S over the horizon in seeded runs of this very procedure. So the rate holds for
the whole study, at every look, as the study page looks after every answer.
"""

import functools
from dataclasses import dataclass

import numpy as np

DROP = 0.15
ALPHA = 0.05
# The bar is calibrated at a reader of the accuracy their baseline estimates; a reader whose
# practice went better than their true accuracy meets a bar set a little low. Calibrating at
# 3.5 % keeps the whole-study rate at 5 % or under in the benchmark (benchmarks/reader_drift.py).
CALIBRATED_AT = 0.035
GUARD = 10  # the latest known-answer cases kept out of the baseline
MIN_BASELINE, MAX_BASELINE = DROP + 0.05, 0.99
RUNS = 4000
CASE_EFFECT = 0.5  # sd of a case's effect on the logit of all its questions
# No reader is flagged on fewer known-answer cases: with one or two, a single hard case
# would pause a careful reader (the rate would hold, but the test would judge one case).
MIN_CASES = 5


@dataclass(frozen=True)
class Drift:
    """The test after a reader's known-answer cases, in the order they were read."""

    statistic: np.ndarray  # S after each case
    threshold: float  # h

    @property
    def flagged_at(self) -> int | None:
        """The number of known-answer cases after which the reader was flagged, or None
        (never before MIN_CASES: one bad case is no drift)."""
        tail = self.statistic[MIN_CASES - 1:]
        over = np.nonzero((tail >= self.threshold) & (tail > 0))[0]
        return int(over[0]) + MIN_CASES if len(over) else None


def _cusum(right: np.ndarray, asked: np.ndarray, prior_right: np.ndarray,
           prior_asked: np.ndarray, drop: float) -> np.ndarray:
    """S after each case for runs x cases of answers at once; the baselines start from each
    run's practice (prior_right of prior_asked)."""
    runs, cases = right.shape
    known_right = np.concatenate([prior_right[:, None], np.cumsum(right, axis=1)], axis=1)
    known_asked = np.concatenate([prior_asked[:, None], np.cumsum(asked, axis=1)], axis=1)
    statistic = np.zeros((runs, cases))
    s = np.zeros(runs)
    for t in range(cases):
        upto = max(0, t - GUARD)  # cases before t, less the guard: 0 means practice alone
        r, a = known_right[:, upto], known_asked[:, upto]
        # No baseline yet (no practice, and not GUARD cases behind): nothing to drift from.
        # A reader who differs from the start is no drift; their accuracy says so instead.
        p0 = np.clip((r + 1) / (a + 2), MIN_BASELINE, MAX_BASELINE)
        p1 = p0 - drop
        step = (right[:, t] * np.log(p1 / p0)
                + (asked[:, t] - right[:, t]) * np.log((1 - p1) / (1 - p0)))
        s = np.maximum(0.0, s + np.where(a > 0, step, 0.0))
        statistic[:, t] = s
    return statistic


def steady_answers(rng: np.random.Generator, accuracy: float, cases: int, questions: int,
                   runs: int) -> np.ndarray:
    """Right answers per case of steady readers at this accuracy, answers of one case sharing
    a random effect on the logit scale (runs x cases)."""
    if cases == 0:
        return np.zeros((runs, 0))
    logit = np.log(accuracy / (1 - accuracy))
    p = 1 / (1 + np.exp(-(logit + rng.normal(0.0, CASE_EFFECT, (runs, cases, 1)))))
    p = np.clip(p * accuracy / p.mean(), 0, 1)  # the mean accuracy stays the one asked
    return (rng.random((runs, cases, questions)) < p).sum(axis=2).astype(float)


@functools.lru_cache(maxsize=128)
def threshold(accuracy: float, horizon: int, questions: int, practice: int,
              alpha: float = CALIBRATED_AT, drop: float = DROP, seed: int = 0) -> float:
    """h: a steady reader of this accuracy, with ``practice`` cases behind their baseline, is
    flagged within ``horizon`` known-answer cases of ``questions`` questions with probability
    ``alpha`` at most (seeded runs of the procedure itself)."""
    p = float(np.clip(accuracy, MIN_BASELINE, MAX_BASELINE))
    rng = np.random.default_rng(seed)
    seen = steady_answers(rng, p, practice, questions, RUNS).sum(axis=1)
    right = steady_answers(rng, p, horizon, questions, RUNS)
    statistic = _cusum(right, np.full_like(right, questions), seen,
                       np.full(RUNS, float(practice * questions)), drop)
    if horizon < MIN_CASES:
        return float("inf")  # too few known-answer cases in the list to judge a drift by
    h = float(np.quantile(statistic[:, MIN_CASES - 1:].max(axis=1), 1 - alpha))
    # A list too short for any baseline to form (no practice, GUARD cases or fewer) can
    # never be flagged: its statistic stays 0, and a bar of 0 would flag everyone.
    return h if h > 0 else float("inf")


def baseline(right: np.ndarray, asked: np.ndarray, practice_right: float,
             practice_asked: float) -> float:
    """The accuracy the next case is measured against, to two decimals: the practice and
    every case but the last GUARD (0.9, never used, before there is any)."""
    upto = max(0, len(right) - GUARD)
    base_right = practice_right + float(np.sum(right[:upto]))
    base_asked = practice_asked + float(np.sum(asked[:upto]))
    return round((base_right + 1) / (base_asked + 2), 2) if base_asked else 0.9


def drift(right: np.ndarray, asked: np.ndarray, practice_right: float, practice_asked: float,
          horizon: int, questions: int, practice_cases: int, alpha: float = CALIBRATED_AT) -> Drift:
    """The test over a reader's known-answer cases so far. ``practice_right`` of
    ``practice_asked`` answers (``practice_cases`` cases) start the baseline; ``horizon``: the
    known-answer cases the reader's list holds in all (what the false-alarm rate is stated
    over). The threshold is calibrated at the baseline the test now measures against (the
    practice and every case before the guard, to two decimals): never at an accuracy the
    drop itself has pulled down, which would raise the bar as the reader falls."""
    right = np.asarray(right, float)
    asked = np.asarray(asked, float)
    statistic = _cusum(right[None, :], asked[None, :], np.array([practice_right]),
                       np.array([practice_asked]), DROP)
    # The simulation behind the bar learns the baseline as this test does, from the same
    # practice: only the accuracy it starts from is the reader's.
    return Drift(statistic[0], threshold(baseline(right, asked, practice_right, practice_asked),
                                         max(1, horizon), questions, practice_cases, alpha))
