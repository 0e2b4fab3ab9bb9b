"""The reads a running study still needs to meet a target, projected: the observed sequence
continued with units resampled from those in (a fixed seed), up to the units the study has
left. A projection, labelled so on the page (app/agreement/monitoring.py)."""

import math

import numpy as np

from app.confidence_sequence import ratio_sequence

PROJECTIONS = 15
PROJECTION_GRID = 250  # coarser than the figures' grid: a projection, not a figure
SEED = 20240


def projected(a: np.ndarray, b: np.ndarray, bounds: np.ndarray | None, left: int,
              target: float, planned: int) -> tuple[int | None, float | None]:
    """(further units needed, median; None when most projections do not get there with the
    units left) and the median half-width once every unit left is read. ``a``, ``b`` and
    ``bounds`` are the sequence's observations as it takes them."""
    rng = np.random.default_rng(SEED)
    needed: list[float] = []
    finals = []
    observed = len(a)
    for _ in range(PROJECTIONS):
        pick = rng.integers(0, observed, left)
        more_bounds = None if bounds is None else np.concatenate([bounds, bounds[pick]])
        half = ratio_sequence(np.concatenate([a, a[pick]]), np.concatenate([b, b[pick]]),
                              grid=PROJECTION_GRID, planned=planned, bounds=more_bounds).half_width
        finals.append(float(half[-1]))
        reached = np.nonzero(half[observed:] <= target)[0]
        needed.append(float(reached[0] + 1) if len(reached) else math.inf)
    median = float(np.median(needed))
    return (None if math.isinf(median) else math.ceil(median)), float(np.median(finals))
