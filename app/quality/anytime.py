"""The data set's acceptable rate with an interval valid at every look (issue 27): the share
of a population's edits the readers pass, from the studies' reads so far, as
app/confidence_sequence.py computes a share over source images.

Each read source image is one observation, in the order its last read came in: its settled
edits' inverse-inclusion weights times the readers' verdicts, over its settled edits'
weights (a ratio, so the weighted share of the population). Every observation is scaled by
the largest weight any image of the population could carry, known before any read, as the
sequence needs. The design weights are the recorded strata's, without the within-stratum
adjustment of the fixed-sample figures (it changes as reads come in, so it is not known in
advance): edits left without a consensus are left out.

Readers read in random orders, so images come in as draws from the sample; the sample is
treated as independent draws (with replacement) from the frame, which for a sample small
beside its frame differs negligibly (benchmarks/sequential_coverage.py measures it for the
study page's figures).
"""

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from app.confidence_sequence import METHOD, ratio_sequence


@dataclass(frozen=True)
class AnytimeRate:
    value: float
    low: float
    high: float
    edits: int  # settled edits it rests on
    images: int  # source images among them
    method: str = METHOD

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def anytime_rate(consensus: np.ndarray, inclusion: np.ndarray, drawn: np.ndarray,
                 clusters: np.ndarray, answered: np.ndarray, index: np.ndarray) -> AnytimeRate | None:
    """The population at ``index`` (frame positions): None until an edit of it is settled.
    ``drawn`` marks the edits the studies drew: the bets are tuned to their images."""
    eligible = index[inclusion[index] > 0]
    if not len(eligible):
        return None
    weight = 1 / inclusion[eligible]
    images, at = np.unique(clusters[eligible], return_inverse=True)
    bound = float(np.bincount(at, weights=weight).max())
    settled = ~np.isnan(consensus[eligible]) & ~np.isnan(answered[eligible])
    if not settled.any():
        return None
    where = at[settled]
    a = np.bincount(where, weights=weight[settled] * consensus[eligible][settled], minlength=len(images))
    b = np.bincount(where, weights=weight[settled], minlength=len(images))
    latest = np.full(len(images), -np.inf)
    np.maximum.at(latest, where, answered[eligible][settled])
    read = np.flatnonzero(b > 0)
    order = read[np.argsort(latest[read], kind="stable")]
    planned = len(np.unique(at[drawn[eligible]])) if len(drawn) else len(order)
    sequence = ratio_sequence(a[order] / bound, b[order] / bound, planned=max(1, planned))
    return AnytimeRate(float(a.sum() / b.sum()), float(sequence.low[-1]), float(sequence.high[-1]),
                       int(settled.sum()), len(order))
