"""One primary question; the others are secondary, and their p-values are Holm-adjusted so
that the report controls the family-wise error rate.

Holm's step-down (Holm 1979) is three array operations. statsmodels' ``multipletests``
gives the same numbers (the tests hold these to it) but runs a full garbage collection on
every Holm call: 90 ms of a report's first view in a web worker's heap.
"""

import numpy as np


def holm_adjusted(p_values: dict[str, float | None]) -> dict[str, float | None]:
    """Adjusted p per question; a question with no test (no discordant case) stays None."""
    tested = {q: p for q, p in p_values.items() if p is not None}
    adjusted: dict[str, float | None] = dict.fromkeys(p_values)
    if tested:
        p = np.asarray(list(tested.values()), dtype=float)
        order = np.argsort(p, kind="stable")
        # The i-th smallest p times the number of hypotheses left, never below the one before.
        stepped = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
        corrected = np.empty_like(p)
        corrected[order] = np.minimum(stepped, 1.0)
        adjusted.update({q: float(v) for q, v in zip(tested, corrected, strict=True)})
    return adjusted
