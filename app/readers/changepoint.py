"""A distribution-free sequential test for a drop in a reader's scores: the rank (Mann-Whitney)
change-point statistic of Pettitt (Applied Statistics 1979) and Hawkins & Deng ("A
nonparametric change-point control chart", Journal of Quality Technology 2010), looked at
after every new score.

At look T (the reader's T-th score), every score so far is ranked (1 = lowest, ties broken
by a fixed random draw); for each split into the first k and the last T - k scores, with
k >= MIN_BEFORE and T - k <= WINDOW, the last scores' rank sum is set against what it would
be if the order said nothing:

    Z = (n(T + 1) / 2 - rank sum of the last n) / sqrt(k n (T + 1) / 12),   n = T - k,

and G_T is the largest Z: a drop lowers the recent ranks. The reader is flagged at the first
look where G_T reaches c.

Why ranks. A steady reader's scores, in their order, are exchangeable: the cases are placed
at random in each reader's list, whatever makes one case harder than another (its
difficulty, which questions it settles, which reader reads it) is the same wherever it falls.
Under exchangeability the ranks are a uniformly random permutation, so the distribution of
the whole path G_1, G_2, ... is the same for every reader, every case difficulty and every
mix of questions. c is therefore set once per number of looks (the reader's list) by
simulating random permutations, and the false-alarm rate it is set for holds exactly, at
every look and for a list of any length: there is no model of the reader to get wrong.

The simulation needs no data: by Renyi's theorem the sequential ranks s_i (how many earlier
scores lie below the i-th) of an exchangeable sequence without ties are independent and
uniform on 0..i-1, and the i-th score lies below an earlier one exactly when s_i is at most
that one's count of smaller scores so far. Tracking the last WINDOW scores' counts this way
costs O(runs x looks x WINDOW), however long the list.
"""

import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

MIN_BEFORE = 5  # scores before a split: no reader is judged against fewer
WINDOW = 20  # the most recent scores a split may put after it
RUNS = 20_000  # simulated lists behind each bar
CHUNK = 5_000
MAX_ALPHA = 0.05  # the largest rate a bar is set for (a study's, before it is shared out)
RANK_ROWS = 512  # scores ranked at once by sequential_ranks
TAIL = 1_000  # the largest values kept per list length: more than MAX_ALPHA's bar needs


@dataclass(frozen=True)
class Changepoint:
    """The test after a reader's scores, in their order."""

    statistic: np.ndarray  # G after each score (-inf before any split is allowed)
    threshold: float  # c

    @property
    def flagged_at(self) -> int | None:
        """The number of scores after which the reader was flagged, or None."""
        over = np.nonzero(self.statistic >= self.threshold)[0]
        return int(over[0]) + 1 if len(over) else None

    @property
    def largest(self) -> float:
        finite = self.statistic[np.isfinite(self.statistic)]
        return float(finite.max()) if len(finite) else 0.0


def sequential_ranks(scores: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """s_i: how many earlier scores lie below the i-th, ties broken by ``tiebreak`` (one
    fixed uniform draw per score, so that a look and the next agree on the order of ties)."""
    x = np.asarray(scores, float)
    t = np.asarray(tiebreak, float)
    ranks = np.empty(len(x), dtype=np.int64)
    # RANK_ROWS scores at a time against all earlier ones: a loop over the scores took 4.7 ms
    # for a 1,000-case list (this takes 1.8), six lists on each agreement page; a table of
    # every pair at once would grow with the square of a long list.
    for start in range(0, len(x), RANK_ROWS):
        stop = min(len(x), start + RANK_ROWS)
        xi, ti = x[start:stop, None], t[start:stop, None]
        xj, tj = x[None, :stop], t[None, :stop]
        earlier = np.arange(stop)[None, :] < np.arange(start, stop)[:, None]
        ranks[start:stop] = np.sum(earlier & ((xj < xi) | ((xj == xi) & (tj < ti))), axis=1)
    return ranks


def path(s: np.ndarray, window: int = WINDOW, min_before: int = MIN_BEFORE) -> np.ndarray:
    """G after each score, for runs x looks of sequential ranks at once."""
    s = np.atleast_2d(s)
    out = np.full(s.shape, -np.inf)
    for i, g in _looks(s, window, min_before):
        out[:, i] = g
    return out


def _looks(s: np.ndarray, window: int, min_before: int) -> Iterator[tuple[int, np.ndarray]]:
    """(look, G of every run at it), for the looks where a split can be made."""
    runs, looks = s.shape
    below = np.zeros((runs, 0), dtype=np.int64)  # the last scores' counts of smaller ones
    for i in range(looks):
        new = s[:, i:i + 1]
        below = np.concatenate([below + (new <= below), new], axis=1)[:, -window:]
        total = i + 1
        # The last n scores' rank sums, n = 1 .. as many as the split allows.
        most = min(below.shape[1], total - min_before)
        if most < 1:
            continue
        n = np.arange(1, most + 1)
        sums = np.cumsum((below[:, ::-1] + 1)[:, :most], axis=1)
        k = total - n
        z = (n * (total + 1) / 2 - sums) / np.sqrt(k * n * (total + 1) / 12)
        yield i, z.max(axis=1)


@functools.lru_cache(maxsize=256)
def threshold(looks: int, alpha: float, window: int = WINDOW, min_before: int = MIN_BEFORE,
              seed: int = 0) -> float:
    """c: a steady reader is flagged within ``looks`` scores with probability at most
    ``alpha`` (random permutations: the same for every reader, see the module's note)."""
    if looks <= min_before:
        return float("inf")  # no split can be made: nobody is flagged
    allowed = _allowed(alpha)
    if allowed >= TAIL:
        raise ValueError(f"alpha {alpha} is above what the kept tail holds ({MAX_ALPHA})")
    top = _tails_once(_span(looks), window, min_before, seed)[looks - 1][::-1]  # ascending
    # The least value G reaches in at most `allowed` of RUNS simulated lists, `allowed` the
    # most whose Clopper-Pearson 90 % upper bound stays at alpha: the bar's own simulation
    # error does not push the rate above what is stated (with 4,000 lists and a fixed seed
    # the rate of one list length sat 10-15 % above it). G takes few values on a short list
    # (six scores: six values, 1/6 each), so a value is only a bar if it is reached that
    # rarely: an interpolated quantile would sit on one reached far more often. Counted in
    # the kept tail alone: a value reached in more than TAIL lists is no bar either way.
    values = np.unique(top[np.isfinite(top)])
    reached = TAIL - np.searchsorted(top, values, side="left")
    fine = values[reached <= allowed]
    return float(fine[0]) if len(fine) else float("inf")


def _span(looks: int) -> int:
    """The simulated length that serves a list of ``looks``: a power of two, 64 at least."""
    return max(64, 1 << (looks - 1).bit_length())


def prepare(looks: int) -> None:
    """Simulate now the bars of lists up to ``looks`` long (the server's start, off any
    request: a 1,000-case list's took 3.7 s, on the first agreement page after a start)."""
    if looks > MIN_BEFORE:
        _tails_once(_span(looks), WINDOW, MIN_BEFORE, 0)


_simulating = threading.Lock()


def _tails_once(span: int, window: int, min_before: int, seed: int) -> np.ndarray:
    # One simulation at a time: the start's warm-up and the first agreement page asked for
    # the same one together, and both ran it (the cache only keeps a finished result).
    with _simulating:
        return _tails(span, window, min_before, seed)


@functools.lru_cache(maxsize=8)
def _tails(span: int, window: int, min_before: int, seed: int) -> np.ndarray:
    """(span x TAIL): for each length n <= span (row n - 1), the TAIL largest of the RUNS
    simulated lists' greatest G over their first n looks. A list of n scores is the first n
    of a longer one (the sequential ranks are independent), so one simulation sets the bar
    of every shorter list and every alpha: a reader's list of a new length, or a study with
    another number of readers, costs a look-up, not a simulation (one of 1,000 looks took
    4.7 s, on the first agreement page of a study after each start)."""
    rng = np.random.default_rng(seed)
    kept = np.full((span, 0), -np.inf)
    # A chunk of lists at a time, fewer the longer they are: a chunk's ranks stay near
    # CHUNK x 1,024 numbers (40 MB), not 650 MB for lists of 10,000 reads.
    chunk_runs = max(TAIL, min(CHUNK, CHUNK * 1024 // span))
    for start in range(0, RUNS, chunk_runs):
        runs = min(chunk_runs, RUNS - start)
        s = np.floor(rng.random((runs, span)) * np.arange(1, span + 1)).astype(np.int64)
        largest = np.full(runs, -np.inf)
        chunk = np.full((span, TAIL), -np.inf)
        for i, g in _looks(s, window, min_before):
            np.maximum(largest, g, out=largest)
            chunk[i] = np.partition(largest, runs - TAIL)[runs - TAIL:]
        kept = np.concatenate([kept, chunk], axis=1)
        kept = np.partition(kept, kept.shape[1] - TAIL, axis=1)[:, -TAIL:]
    return np.sort(kept, axis=1)[:, ::-1]


@functools.lru_cache(maxsize=64)
def _allowed(alpha: float) -> int:
    """The most exceedances out of RUNS whose 90 % upper bound on the rate is at most alpha."""
    from scipy.stats import beta

    count = int(alpha * RUNS)
    while count >= 0 and beta.ppf(0.9, count + 1, RUNS - count) > alpha:
        count -= 1
    return count


def test(scores: np.ndarray, tiebreak: np.ndarray, looks: int, alpha: float) -> Changepoint:
    """The test over the scores so far (higher is better); ``looks``: the scores the reader's
    list holds in all, what the rate ``alpha`` is stated over (never fewer than seen)."""
    x, t = np.asarray(scores, float), np.asarray(tiebreak, float)
    statistic = np.where(_dropped(x), _observed_path(x, t), -np.inf)
    return Changepoint(statistic, threshold(max(looks, len(x)), alpha))


def _observed_path(x: np.ndarray, t: np.ndarray, window: int = WINDOW,
                   min_before: int = MIN_BEFORE) -> np.ndarray:
    """path() of one reader's scores, every look at once (looks x window arrays, not a loop
    over looks: a 1,000-case list's G took 12 ms, six of them on each agreement page). The
    rank of score j among the first T is 1 + s_j + how many of the scores after j, up to T,
    lie below it; the test holds it to path() on random lists."""
    length = len(x)
    if length == 0:
        return np.zeros(0)
    s = sequential_ranks(x, t)
    j = np.arange(length)[:, None]
    d = np.arange(window)[None, :]
    later = np.clip(j + d, 0, length - 1)
    lies_below = (x[later] < x[j]) | ((x[later] == x[j]) & (t[later] < t[j]))
    lies_below &= (j + d < length) & (d > 0)
    after_below = np.cumsum(lies_below, axis=1)  # [j, m]: of the m scores after j, below it
    source = np.clip(j - d, 0, None)  # at look j + 1, the score m = d places back
    ranks = np.where(j - d >= 0, 1 + s[source] + after_below[source, d], 0)
    sums = np.cumsum(ranks, axis=1)
    total, n = j + 1, d + 1
    allowed = (j - d >= 0) & (n <= total - min_before)
    k = np.where(allowed, total - n, 1)
    z = np.where(allowed, (n * (total + 1) / 2 - sums) / np.sqrt(k * n * (total + 1) / 12), -np.inf)
    return np.asarray(z.max(axis=1))


def _dropped(x: np.ndarray, window: int = WINDOW, min_before: int = MIN_BEFORE) -> np.ndarray:
    """At each look, whether some split the test may make has the later scores lower on
    average than the earlier ones. Ties are ranked by a random draw, so a reader right on
    every case (every score equal) had ranks like a steady reader's, and was paused in 5 % of
    studies for no drop at all; a look with no drop in the scores themselves now flags no
    one. It only takes flags away: the stated rate still holds."""
    sums = np.concatenate([[0.0], np.cumsum(x)])
    total = np.arange(1, len(x) + 1)[:, None]  # every look at once: looks x window splits
    n = np.arange(1, window + 1)[None, :]
    allowed = n <= total - min_before
    start = np.clip(total - n, 1, None)  # where a split is not allowed, any valid index
    after = (sums[total] - sums[start]) / n
    before = sums[start] / start
    return np.any(allowed & (after < before - 1e-12), axis=1)
