"""The human ceiling: does the judge agree with the readers as often as they agree with each
other? Both are pooled pairwise agreements over the same cases (each judge-reader pair, each
reader-reader pair, where both voted), and their difference is resampled with them, so its
interval accounts for the same source images on both sides."""

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from app.agreement.resample import ClusterBootstrap, Figure
from app.agreement.stats import Vote
from app.agreement.two_raters import ratio


def pair_counts(judge: Sequence[Vote], readers: Sequence[Sequence[Vote]]) -> np.ndarray:
    """Per case: judge-reader pairs agreeing, judge-reader pairs, reader-reader pairs
    agreeing, reader-reader pairs."""
    out = np.zeros((len(judge), 4))
    for i, j in enumerate(judge):
        cast = [r[i] for r in readers if r[i] is not None]
        if j is not None:
            out[i, 0] = sum(1 for v in cast if v == j)
            out[i, 1] = len(cast)
        pairs = list(combinations(cast, 2))
        out[i, 2] = sum(1 for a, b in pairs if a == b)
        out[i, 3] = len(pairs)
    return out


# "Within" is a claim of equivalence: the whole interval of the difference must lie inside
# this margin. An interval that merely holds 0 is absence of evidence, and says so.
EQUIVALENCE_MARGIN = 0.05
# A conclusion rests on at least this many compared cases and source images; below that
# the page says there are too few to compare.
MIN_CASES = 30
MIN_IMAGES = 10


def verdict(difference: Figure, margin: float = EQUIVALENCE_MARGIN) -> str:
    """The conclusion on the judge against the readers' agreement with each other, as a
    clause, as far as the interval of the difference supports it."""
    if difference.n < MIN_CASES or difference.clusters < MIN_IMAGES:
        return (f"too few cases to compare (n = {difference.n} cases, "
                f"{difference.clusters} source images; {MIN_CASES} and {MIN_IMAGES} needed)")
    if difference.low is None or difference.high is None:
        return "no interval, so no conclusion"
    if difference.high < 0:
        return "the judge is below the readers' agreement with each other"
    if difference.low > 0:
        return "the judge is above the readers' agreement with each other"
    if -margin <= difference.low and difference.high <= margin:
        return f"the judge is within the readers' agreement with each other (margin ± {margin:g})"
    return (f"inconclusive: the interval holds no difference but reaches past the margin "
            f"± {margin:g}")


def human_ceiling(judge: Sequence[Vote], readers: Sequence[Sequence[Vote]],
                  boot: ClusterBootstrap, margin: float = EQUIVALENCE_MARGIN) -> dict[str, Any]:
    counts = pair_counts(judge, readers)
    figures = boot.figures(counts, {
        "judge_vs_readers": lambda s: ratio(s[..., 0], s[..., 1]),
        "reader_vs_reader": lambda s: ratio(s[..., 2], s[..., 3]),
        "difference": lambda s: ratio(s[..., 0], s[..., 1]) - ratio(s[..., 2], s[..., 3]),
    }, n=int((counts[:, 1] > 0).sum()),
        bounds={"judge_vs_readers": (0.0, 1.0), "reader_vs_reader": (0.0, 1.0),
                "difference": (-1.0, 1.0)})
    return {name: f.as_dict() for name, f in figures.items()} | {
        "judge_vs_readers_pairs": int(counts[:, 1].sum()),
        "reader_vs_reader_pairs": int(counts[:, 3].sum()),
        "margin": margin, "judge_is": verdict(figures["difference"], margin)}
