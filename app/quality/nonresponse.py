"""Drawn edits the readers left without a consensus (a tie nobody settled, a case nobody read,
"cannot assess" all round): their weight goes to the settled edits of their own stratum.

Spread over every stratum instead (the weights normalised over all settled edits), a stratum
whose cases the readers split on more often would count for less than its share of the data
set. Ties are cases the readers themselves found hard, so they are not missing at random, and
the within-stratum adjustment is the weighting-class adjustment of survey sampling (Little &
Rubin, "Statistical Analysis with Missing Data", 3rd ed., section 3.3): each stratum keeps
its weight, N_h. What it cannot remove, the bias if settled and unsettled edits of one stratum
differ, is shown by the sensitivity lines (ties as pass, as fail; cannot assess as pass, as fail).
"""

import numpy as np


def within_stratum(weights: np.ndarray, drawn: np.ndarray, settled: np.ndarray,
                   strata: np.ndarray) -> np.ndarray:
    """The settled edits' weights, scaled per stratum so that they sum to what every drawn
    edit of the stratum weighed; 0 elsewhere (``strata`` as integer codes)."""
    if not len(weights):
        return np.zeros(0)
    size = int(strata.max()) + 1
    drawn_weight = np.bincount(strata[drawn], weights=weights[drawn], minlength=size)
    settled_weight = np.bincount(strata[settled], weights=weights[settled], minlength=size)
    factor = np.divide(drawn_weight, settled_weight, out=np.zeros(size), where=settled_weight > 0)
    adjusted = np.zeros(len(weights))
    adjusted[settled] = weights[settled] * factor[strata[settled]]
    return adjusted
