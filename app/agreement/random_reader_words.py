"""The sentences that say what a readers-random interval means: in percentage points where
the figure is a difference of shares, what a spread estimated as zero cannot allow for, how
far the interval is from its margin and what would bring it there, and what the fixed-reader
interval's width means beside it. Shared by the judge-as-reader section and the
real-or-edited panel."""

import math

import numpy as np

from app.mrmc.sample_size import Power


def mean_interval(ci: tuple[float, float]) -> tuple[float | None, float | None]:
    """A mean share's interval to draw and print: cut at 0 and 1, which no share passes (the
    readers-random t interval can: 0.569-1.175); none when nothing varies (NO_INTERVAL)."""
    if math.isnan(ci[0]):
        return None, None
    return max(0.0, ci[0]), min(1.0, ci[1])


def signed_points(difference: float) -> str:
    """A difference of shares in percentage points, signed: "+12.3"."""
    return f"{difference * 100:+.1f}"


def points_more_or_less(difference: float) -> str:
    """A difference of shares in words: "12.3 percentage points more often"."""
    words = "more often" if difference >= 0 else "less often"
    return f"{abs(difference) * 100:.1f} percentage points {words}"


def p_text(p: float) -> str:
    """A p-value as a reader writes it: "p = 0.012", or "p < 0.001"."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def alike_sentence(readers: int, what: str) -> str:
    """What a readers-random interval cannot allow for when every reader's figure is the same:
    their spread is estimated as zero, Hillis's df has no bound, and the interval is the
    normal one the cases alone give (as the Iowa software and RJafroc compute it)."""
    return (f"All {readers} readers have exactly the same {what}, so their spread is estimated "
            "as zero and this interval allows nothing for how other radiologists would differ: "
            "it is as wide as the cases alone make it. Another reader will tell.")


def precision_sentence(readers: int, ci: tuple[float, float], margin: float, expected: float,
                       at_these: Power | None, fewest: int | None, have: int, unit: str,
                       alike: bool = False, points: bool = False) -> str:
    """How far a readers-random interval is from the margin, and what would bring it there,
    from the study's own variance components (Hillis, Obuchowski & Berbaum 2011).
    ``expected``: the half-width those components predict for this many readers and
    ``have`` units; with few readers the observed spread across readers can fall far below
    it by chance, and a narrow interval then promises more than the study can keep.
    ``alike``: every reader's figure is the same, and no prediction is made from a spread
    estimated as zero (it would promise the margin with too few readers).
    ``points``: the figure is a difference of shares, written in percentage points."""
    now = (ci[1] - ci[0]) / 2

    def w(x: float) -> str:
        return f"{x * 100:.1f} points" if points else f"{x:.3f}"

    bound = f"{margin * 100:g} points" if points else f"{margin:g}"

    if alike:
        return (f"With {readers} readers who all read alike, the readers-random interval is "
                f"\u00b1 {w(now)} wide from the {unit} alone. How many readers and {unit} the "
                "margin needs cannot be predicted from a spread estimated as zero, so no table "
                "is given until the readers differ.")
    start = (f"With {readers} readers the readers-random interval is \u00b1 {w(now)} wide: it "
             "allows for how differently other radiologists would read.")
    if np.isnan(expected):  # the components hold no variance to predict from
        return start
    if now <= margin and expected <= margin:
        return f"{start} That is already inside the margin of \u00b1 {bound}."
    if now <= margin:
        start = (f"{start} It is inside the margin of \u00b1 {bound}, but this study's variance "
                 f"components predict \u00b1 {w(expected)} for {readers} readers and {have:,} "
                 f"{unit}: with this few readers their spread is itself poorly estimated, and "
                 "came out narrow by chance. Do not lean on it.")
    if at_these is not None:
        return (f"{start} To bring it inside \u00b1 {bound} as predicted, these {readers} "
                f"readers would need about {at_these.cases:,} {unit} (this study has {have:,}); "
                "more readers need fewer (table below).")
    if fewest is not None:
        return (f"{start} No number of {unit} brings it inside \u00b1 {bound} with {readers} "
                f"readers: the readers' own spread is too large. At least {fewest} readers "
                "are needed (table below).")
    return (f"{start} Up to 20 readers, no number of {unit} brings it inside \u00b1 {bound} "
            "with these variance components.")


def fixed_width(fixed: tuple[float, float], random: tuple[float, float]) -> str:
    """What the fixed-reader interval's width means beside the random one. Obuchowski-
    Rockette's fixed-reader error term keeps the cases' whole variance, so with few cases it
    can be the wider of the two."""
    if fixed[1] - fixed[0] < random[1] - random[0]:
        return "narrower, and it says nothing about other readers"
    return ("no narrower here: with this few cases the cases' own variance, which both carry, "
            "dominates; it says nothing about other readers")
