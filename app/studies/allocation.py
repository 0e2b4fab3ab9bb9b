"""How a fixed study's cases are spread over its strata, and what each stratum's cases weigh
in the figures that estimate the whole pool (the data set's agreement, not the sample's).

A stratified sample drawn without replacement, n_h of the N_h edits of stratum h, estimates
the pool's share by weighting each case of stratum h by (N_h / N) / (n_h / n): the
stratified mean (Cochran, "Sampling Techniques", 3rd ed., 5.2), written as a weighted mean of
cases so that the anytime-valid sequence and the bootstrap take it like any other.

With proportional allocation every weight is 1 (up to rounding) and the sample is as
efficient as drawing single edits at random. Any other allocation reads more for the same
precision on the pool's share: by Kish's design effect, 1 + the squared coefficient of
variation of the weights over the cases (Kish, "Survey Sampling", 1965, 11.7), which the form
states beside the counts typed. The sequence's values are scaled by the largest weight, fixed
when the study is made, which widens its bets' limits as much again: strata read more than
their share cost reads twice.
"""

from collections.abc import Mapping

DEFAULT_CASES = 300  # the form's default sample: the paper's 100 edits, three times over


def proportional(pool: Mapping[str, int], total: int) -> dict[str, int]:
    """``total`` cases over the strata in proportion to their pools, by largest remainder
    (ties by key), each stratum with a pool given at least one case where the total allows:
    a stratum with none could not be reported, and its part of the pool would be missing
    from the estimate."""
    strata = sorted(k for k, n in pool.items() if n > 0)
    size = sum(pool[k] for k in strata)
    total = max(0, min(total, size))
    if not strata or not total:
        return {k: 0 for k in sorted(pool)}
    floor = 1 if total >= len(strata) else 0
    counts = {k: min(pool[k], max(floor, total * pool[k] // size)) for k in strata}
    # Largest remainders first, then the strata with room in key order, until the total.
    order = sorted(strata, key=lambda k: (-(total * pool[k] % size), k))
    while sum(counts.values()) < total:
        grew = False
        for k in order:
            if sum(counts.values()) >= total:
                break
            if counts[k] < pool[k]:
                counts[k] += 1
                grew = True
        if not grew:
            break
    while sum(counts.values()) > total:  # the floor of 1 took more than the total
        k = max(strata, key=lambda h: (counts[h] / pool[h], h))
        counts[k] -= 1
    return {k: counts.get(k, 0) for k in sorted(pool)}


def stratum_weights(pool: Mapping[str, int], counts: Mapping[str, int]) -> dict[str, float]:
    """Each sampled stratum's case weight, (N_h / N) / (n_h / n), over the strata sampled (a
    stratum with no case drawn is outside what the weighted figures estimate)."""
    drawn = {k: n for k, n in counts.items() if n > 0 and pool.get(k, 0) > 0}
    size = sum(pool[k] for k in drawn)
    cases = sum(drawn.values())
    return {k: (pool[k] / size) / (n / cases) for k, n in sorted(drawn.items())} if cases else {}


def design_effect(pool: Mapping[str, int], counts: Mapping[str, int]) -> float:
    """Kish's design effect of the weights: the reads this allocation needs over those of a
    proportional one, for the same precision on the pool's share (1 when proportional)."""
    weights = stratum_weights(pool, counts)
    cases = sum(counts[k] for k in weights)
    if not cases:
        return 1.0
    mean = sum(counts[k] * w for k, w in weights.items()) / cases
    square = sum(counts[k] * w * w for k, w in weights.items()) / cases
    return square / (mean * mean)


def unsampled(pool: Mapping[str, int], counts: Mapping[str, int]) -> list[str]:
    """The strata with edits in the pool and no case asked: outside the weighted figures."""
    return sorted(k for k, n in pool.items() if n > 0 and counts.get(k, 0) <= 0)
