"""Confidence sequences: intervals that hold at every look at a growing sample, and at a stop
chosen by looking (anytime-valid), for a share of cases counted over source images.

The method is the hedged betting confidence sequence of Waudby-Smith & Ramdas ("Estimating
means of bounded random variables by betting", JRSS-B 86(1), 2024, Theorem 3 with the
predictable plug-in empirical-Bernstein bets of their eq. (26), the hedged capital of
Section 4.2 and the grid of Section 5), as the ``confseq`` package implements it
(``confseq.betting.betting_cs``: theta 1/2, bets truncated at half of 1/m and 1/(1-m), a grid
of 1000); the tests hold this code to that package. Written here because the package builds a
C++ extension against Boost and pulls matplotlib and multiprocess into a server.

One departure, which reduces to the package's construction when every unit holds one case:
the unit is a source image holding several cases, and the figure is a share of cases (a
ratio: hits over cases, summed over images). For a candidate share m, the bet on image i is on
``a_i - m * b_i``, where ``a_i`` and ``b_i`` are the image's hits and cases scaled by a bound
known before it arrives (0 <= a_i <= b_i <= 1). At the true share this has mean 0 whatever
the image's size, so the capital is a nonnegative martingale and Ville's inequality gives the
guarantee: with probability at least 1 - alpha, the true share lies in every interval of the
sequence. A weight per image (an inverse inclusion probability) enters through ``a`` and
``b`` alike.

The bets are sized by the running variance of what is bet on, the residual ``a - m * b`` at
each candidate m, not by that of the hits ``a``: images of many cases carry many hits, so the
hits vary with the image's size while the residual at the true share does not. Each bet still
uses the units before it only, so the guarantee is unchanged; with one case per unit (b = 1)
the residual's variance is the hits' and the construction is the package's, to the last bit.

Images are taken as independent draws from the sampled population (with replacement): for a
sample small beside its pool the difference is negligible; benchmarks/sequential_coverage.py
measures the coverage under the real draw without replacement and under peeking.
"""

import functools
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
GRID = 1000  # the candidate shares are 0, 1/GRID, ..., 1
TRUNCATION = 0.5  # bets stay within half of what would stake the whole capital
CHUNK = 64  # units per slice of the units x grid table (see ratio_sequence)
METHOD = ("anytime-valid confidence sequence: hedged betting (Waudby-Smith & Ramdas, JRSS-B "
          "2024), predictable plug-in empirical-Bernstein bets sized by the running variance "
          "of each candidate share's residual and tuned to the units the study's targets are "
          "expected to need (without a target, to the study's size), source images (or an "
          "adaptive study's drawn edits) as the unit, running intersection")


def _scale(n: int, planned: int | None) -> np.ndarray:
    t = np.arange(1, n + 1)
    return t * np.log(1 + t) if planned is None else np.full(n, float(planned))


@dataclass(frozen=True)
class _Residuals:
    """The running sums behind the predictable variance of the residual a - m b, for every m
    at once: with da and db each unit's distance from the running means of a and b (one
    pseudo-unit of a = 1/2, b = 1 in each, as ``confseq`` regularises), the variance before
    unit t is (1/4 + Saa - 2 m Sab + m^2 Sbb) / t over the units before it."""

    aa: np.ndarray
    ab: np.ndarray
    bb: np.ndarray
    count: np.ndarray  # t: the units before, plus the pseudo-unit

    # With ``bounds``: 1 / each unit's bound squared (a and b were divided by the bound). The
    # sums are then of the units' unscaled values, and each unit's variance is put on its own
    # scale: units scaled by different bounds (an adaptive study's batches) share one estimate.
    scale: np.ndarray | None = None

    @classmethod
    def of(cls, a: np.ndarray, b: np.ndarray, bounds: np.ndarray | None = None) -> "_Residuals":
        t = np.arange(1, len(a) + 1)
        unit = 1.0 if bounds is None else float(bounds[0])  # the pseudo-unit's scale
        if bounds is not None:
            a, b = a * bounds, b * bounds
        da = a - (0.5 * unit + np.cumsum(a)) / (t + 1)
        db = b - (1.0 * unit + np.cumsum(b)) / (t + 1)
        aa, ab, bb = (np.append(0.0, np.cumsum(v)[:-1]) for v in (da * da, da * db, db * db))
        if bounds is None:
            return cls(aa, ab, bb, t.astype(float))
        return cls(aa, ab, bb, t.astype(float), 1 / bounds**2)

    def variance(self, rows: slice, shares: np.ndarray, out: np.ndarray) -> np.ndarray:
        np.multiply.outer(self.bb[rows], shares, out=out)
        out -= 2 * self.ab[rows, None]
        out *= shares
        if self.scale is None:
            out += 0.25 + self.aa[rows, None]
        else:  # unscaled sums, put on this unit's scale; the pseudo-unit's 1/4 is a scaled one
            out += self.aa[rows, None]
            out *= self.scale[rows, None]
            out += 0.25
        out /= self.count[rows, None]
        return out


def predictable_bets(x: np.ndarray, alpha: float, planned: int | None = None) -> np.ndarray:
    """The predictable plug-in empirical-Bernstein bets of Waudby-Smith & Ramdas (eq. 26),
    regularised by one pseudo-observation of mean 1/2 and variance 1/4 as in ``confseq``: the
    bet on observation t uses observations 1..t-1 only. With ``planned`` units the bets are
    tuned to be narrowest there (their fixed-n bets, ``confseq``'s ``fixed_n``): the sequence
    stays valid at every look, and is about a fifth narrower around the planned size than
    bets that shrink like 1/sqrt(t log t)."""
    t = np.arange(1, len(x) + 1)
    mean = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1)
    variance = (0.25 + np.cumsum((x - mean) ** 2)) / (t + 1)
    before = np.append(0.25, variance[:-1])
    scale = _scale(len(x), planned)
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2 * np.log(1 / alpha) / (scale * before))
    return np.nan_to_num(bets, nan=0.0, posinf=0.0)


@dataclass(frozen=True)
class Sequence:
    """The interval after each unit, in arrival order."""

    low: np.ndarray
    high: np.ndarray

    def __len__(self) -> int:
        return len(self.low)

    @property
    def half_width(self) -> np.ndarray:
        return (self.high - self.low) / 2


def ratio_sequence(a: np.ndarray, b: np.ndarray, *, alpha: float = ALPHA, grid: int = GRID,
                   running_intersection: bool = True, planned: int | None = None,
                   bets_on: str = "residual", bounds: np.ndarray | None = None) -> Sequence:
    """The confidence sequence of sum(a) / sum(b) over units arriving in the given order.

    ``a`` and ``b`` are each unit's hits and cases, scaled by a bound fixed before the unit
    arrived, so that 0 <= a <= b <= 1. A unit with b = 0 (nothing compared) bets nothing.
    ``planned``: the units the bets are tuned for (see ``predictable_bets``). ``bets_on``:
    "residual" sizes each candidate share's bets by its residual's variance (the method);
    "hits" by the hits' (the earlier sizing, kept for the benchmark that compares them).
    ``bounds``: the scale each unit's a and b were divided by, where it changes between units
    (an adaptive study's batches): the residual's running variance is then taken on the
    unscaled values and put on each unit's own scale. Without it, a study whose weights grew
    mid-way sized its later bets by the variance of its earlier, larger-scaled units, and bet
    too little (benchmarks/adaptive_design.py). Each bet still uses the units before it and
    its own unit's bound, known before the unit arrives, so the guarantee is unchanged."""
    if bets_on not in ("residual", "hits"):
        raise ValueError("the bets are sized on the residual or the hits")
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a and b must be two sequences of the same length")
    if len(a) and (a.min() < 0 or (a > b + 1e-12).any() or b.max() > 1 + 1e-12):
        raise ValueError("each unit needs 0 <= a <= b <= 1")
    if not len(a):
        return Sequence(np.zeros(0), np.zeros(0))
    shares = np.linspace(0.0, 1.0, grid + 1)
    on_hits = bets_on == "hits"
    bets = predictable_bets(a, alpha / 2, planned) if on_hits else None
    if bounds is not None and (len(bounds) != len(a) or (np.asarray(bounds) <= 0).any()):
        raise ValueError("one positive bound per unit")
    residuals = None if on_hits else _Residuals.of(
        a, b, None if bounds is None else np.asarray(bounds, dtype=float))
    # Bet = sqrt(reach / variance), reach = 2 log(1 / (alpha / 2)) / scale, per unit.
    reach = 2 * np.log(2 / alpha) / _scale(len(a), planned)
    with np.errstate(divide="ignore"):
        up_cap = TRUNCATION / shares
        down_cap = TRUNCATION / (1 - shares)
    low = np.zeros(len(a))
    high = np.ones(len(a))
    gain_up = np.zeros(grid + 1)
    gain_down = np.zeros(grid + 1)
    threshold = np.log(1 / alpha)
    # Units x grid, a chunk of units at a time: the whole table of a study of 8,000 source
    # images would take half a gigabyte, and a chunk that stays in the processor's cache is
    # several times faster than one that does not (the watch computes seven of these per
    # view). Units down the rows, so that the running sums add whole rows and each unit's
    # interval is read along one row. The capital so far is added to the chunk's first row
    # before its running sum, so every sum is added in unit order whatever the chunk size.
    rows = min(CHUNK, len(a))
    bet, up, down = np.empty((rows, grid + 1)), np.empty((rows, grid + 1)), np.empty((rows, grid + 1))
    for start in range(0, len(a), CHUNK):
        stop = min(start + CHUNK, len(a))
        size = stop - start
        bet_, up_, down_ = bet[:size], up[:size], down[:size]
        np.multiply.outer(b[start:stop], shares, out=bet_)
        np.subtract(a[start:stop, None], bet_, out=bet_)  # a - m b: mean 0 at the true share m
        if bets is not None:
            up_[:] = bets[start:stop, None]
        else:  # each candidate share's own bet, from its residual's variance so far
            assert residuals is not None
            residuals.variance(slice(start, stop), shares, out=up_)
            np.divide(reach[start:stop, None], up_, out=up_)
            np.sqrt(up_, out=up_)
        np.minimum(up_, down_cap[None, :], out=down_)
        np.minimum(up_, up_cap[None, :], out=up_)
        # Logs: a product of thousands of factors over- or underflows. Every factor is at
        # least 1/2 (the truncation), so each log is finite.
        up_ *= bet_
        np.log1p(up_, out=up_)
        up_[0] += gain_up
        _running_sum(up_)
        down_ *= bet_
        np.negative(down_, out=down_)
        np.log1p(down_, out=down_)
        down_[0] += gain_down
        _running_sum(down_)
        gain_up, gain_down = up_[-1].copy(), down_[-1].copy()
        np.maximum(up_, down_, out=up_)
        up_ += np.log(0.5)
        inside = up_ <= threshold
        any_in = inside.any(axis=1)
        first = np.argmax(inside, axis=1)
        last = grid - np.argmax(inside[:, ::-1], axis=1)
        span = np.arange(start, stop)[any_in]
        low[span] = np.maximum(0.0, shares[first[any_in]] - 1 / grid)
        high[span] = np.minimum(1.0, shares[last[any_in]] + 1 / grid)
    if running_intersection:
        low, high = np.maximum.accumulate(low), np.minimum.accumulate(high)
    return Sequence(low, high)


def _running_sum(rows: np.ndarray) -> None:
    """np.cumsum(rows, axis=0, out=rows), row by row: the same additions in the same order,
    in half the time (numpy's accumulate down the rows of a wide table does not vectorise)."""
    for r in range(1, len(rows)):
        np.add(rows[r - 1], rows[r], out=rows[r])


def mean_sequence(x: np.ndarray, **options: float | int | bool | None) -> Sequence:
    """The confidence sequence of the mean of values in [0, 1], one per unit."""
    x = np.asarray(x, dtype=float)
    return ratio_sequence(x, np.ones_like(x), **options)  # type: ignore[arg-type]


def expected_half_width(share: float, units: int, *, runs: int = 7, seed: int = 0,
                        alpha: float = ALPHA) -> float:
    """The median half-width after ``units`` units of one case each at this share (fixed
    seeds): what reading a whole sample can be expected to give, to refuse a target out of
    reach before anyone reads."""
    if units < 1:
        return 0.5
    rng = np.random.default_rng(seed)
    widths = [float(mean_sequence((rng.random(units) < share).astype(float), alpha=alpha,
                                  grid=250, planned=units).half_width[-1]) for _ in range(runs)]
    return float(np.median(widths))


@functools.lru_cache(maxsize=256)  # a study page asks it on every view: the answer never changes
def units_for_target(share: float, target: float, *, most: int = 100_000,
                     alpha: float = ALPHA) -> int:
    """The fewest units of one case each whose expected half-width at this share, the bets
    tuned to that many, is within the target (at most ``most``): the size to tune a study's
    bets to when it stops at a target. Tuning to the budget instead leaves the interval wider
    wherever the study stops short of it (a fifth to a third more reads on the benchmarks)."""
    low, high = 1, 64
    while expected_half_width(share, high, alpha=alpha) > target:  # doubling, then bisection
        if high >= most:
            return most
        low, high = high + 1, min(most, 2 * high)
    while low < high:  # the half-width shrinks with the units
        middle = (low + high) // 2
        if expected_half_width(share, middle, alpha=alpha) <= target:
            high = middle
        else:
            low = middle + 1
    return low
