"""Agreement among all readers of a study: Fleiss' kappa (Gwet's generalised form), Gwet's
multi-rater AC1 and Krippendorff's alpha, each with a cluster-bootstrap interval.

Missing reads stay missing: a case counts once two readers rated it (one, for the category
shares), so neither "k readers per case" nor a reader who skipped cases leaves them undefined.
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from app.agreement.multirater import (
    ac1_from_sums,
    alpha_from_coincidences,
    category_counts,
    coincidences,
    fleiss_from_sums,
    fleiss_generalised,
    gwet_ac1_multi,
    nominal_alpha,
    subject_features,
)
from app.agreement.resample import ClusterBootstrap
from app.agreement.stats import Vote

BOUNDS = (-1.0, 1.0)


def among_readers(votes: Sequence[Sequence[Vote]], boot: ClusterBootstrap) -> dict[str, Any]:
    """``votes`` holds one list per reader, case by case in the bootstrap's order."""
    by_case = list(zip(*votes, strict=True))
    counts = category_counts(by_case)
    rated_twice = int((counts.sum(axis=1) >= 2).sum())
    features = subject_features(counts)
    figures = boot.figures(features, {"fleiss_kappa": fleiss_from_sums, "ac1": ac1_from_sums},
                           n=rated_twice, bounds={"fleiss_kappa": BOUNDS, "ac1": BOUNDS})
    alpha = boot.figure(coincidences(counts), alpha_from_coincidences, n=rated_twice, bounds=BOUNDS)
    fleiss, ac1 = fleiss_generalised(counts), gwet_ac1_multi(counts)
    matrix = np.array([[np.nan if v is None else float(v) for v in row] for row in votes])
    usable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    if alpha.value is not None and usable.size:
        # The krippendorff package is the reference; the coincidence sums only resample it.
        alpha = replace(alpha, value=nominal_alpha(usable))
    return {
        "n_rated_twice": rated_twice,
        "n_rated": int((counts.sum(axis=1) >= 1).sum()),
        "fleiss_kappa": figures["fleiss_kappa"].as_dict() | {"se_gwet": fleiss.se},
        "ac1": figures["ac1"].as_dict() | {"se_gwet": ac1.se},
        "krippendorff_alpha": alpha.as_dict(),
    }
