"""Which tasks of a real-or-edited study show their original instead of their edit."""

import math
import random

from app.studies.pool import Candidate


def originals_shown(share: float, seed: int, sample: dict[str, list[Candidate]]) -> set[int]:
    """The tasks of a real-or-edited study whose original is shown instead of their edit: the
    plan's ``share`` of the whole sample (half up), spread over the strata in proportion (each
    its share's whole part, the rest to the largest remainders, ties in a seeded order), and
    drawn within each stratum with the seed: truth is balanced within every stratum and
    reproducible, and three strata of 3 at a half give 4 or 5 originals, never 6."""
    total = sum(len(units) for units in sample.values())
    target = math.floor(total * share + 0.5)
    counts = {key: math.floor(len(units) * share) for key, units in sample.items()}
    keys = sorted(sample)
    random.Random(f"{seed}:originals").shuffle(keys)
    keys.sort(key=lambda k: len(sample[k]) * share - counts[k], reverse=True)
    for key in keys[:max(0, target - sum(counts.values()))]:
        counts[key] += 1
    chosen: set[int] = set()
    for key, units in sample.items():
        rng = random.Random(f"{seed}:originals:{key}")
        chosen.update(c.task_id for c in rng.sample(units, counts[key]))
    return chosen
