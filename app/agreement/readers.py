"""Agreement among readers: pairwise Cohen's kappa, Fleiss' kappa and Krippendorff's alpha.

This is the human ceiling the judge is measured against.
"""

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from app.agreement.stats import PairAgreement, Vote, compare


@dataclass(frozen=True)
class ReaderAgreement:
    pairs: dict[tuple[str, str], PairAgreement]
    fleiss: float | None
    fleiss_n: int  # cases every reader answered (Fleiss needs complete rows)
    alpha: float | None
    alpha_n: int  # cases with at least two answers (alpha keeps missing reads missing)

    def as_dict(self) -> dict[str, object]:
        return {"pairs": [{"a": a, "b": b, **p.as_dict()} for (a, b), p in self.pairs.items()],
                "fleiss_kappa": {"value": self.fleiss, "n": self.fleiss_n},
                "krippendorff_alpha": {"value": self.alpha, "n": self.alpha_n}}


def among_readers(votes: Mapping[str, Sequence[Vote]]) -> ReaderAgreement:
    """``votes`` maps each reader to their answers, case by case in one shared order."""
    names = sorted(votes)
    pairs = {(a, b): compare(votes[a], votes[b]) for a, b in itertools.combinations(names, 2)}
    matrix = np.array([[np.nan if v is None else float(v) for v in votes[name]] for name in names],
                      dtype=float).reshape(len(names), -1)
    complete = matrix[:, ~np.isnan(matrix).any(axis=0)]
    fleiss = None
    if len(names) >= 2 and complete.shape[1] and len(np.unique(complete)) > 1:
        counts, _ = aggregate_raters(complete.T.astype(int), n_cat=2)
        fleiss = fleiss_from_counts(counts)
    rated_twice = (~np.isnan(matrix)).sum(axis=0) >= 2
    alpha = None
    usable = matrix[:, rated_twice]
    if len(names) >= 2 and usable.shape[1] and len(np.unique(usable[~np.isnan(usable)])) > 1:
        alpha = nominal_alpha(usable)
    return ReaderAgreement(pairs, fleiss, int(complete.shape[1]), alpha, int(rated_twice.sum()))


def fleiss_from_counts(counts: np.ndarray) -> float:
    """Fleiss' kappa from a cases x categories table of how many raters chose each."""
    return float(fleiss_kappa(counts, method="fleiss"))


def nominal_alpha(matrix: np.ndarray) -> float:
    """Krippendorff's alpha, nominal, from a raters x cases matrix with NaN for no read."""
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
