"""The trapezoidal (Wilcoxon) AUC of every modality x reader, and its jackknife over cases.

AUC = mean over (diseased, non-diseased) pairs of 1 if the diseased case is rated higher, 1/2
on a tie (-inf, "no mark", ties with -inf). Leaving one case out changes it through that case's
structural component (DeLong et al. 1988): a non-diseased case k's share of pairs won against
it, a diseased case's share of pairs it wins. So the K leave-one-out AUCs cost no more than
the AUCs themselves.
"""

import numpy as np


def _placements(ratings: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For one rater: each diseased case's share of non-diseased cases it outranks (ties 1/2),
    and each non-diseased case's share of diseased cases that outrank it."""
    diseased, normal = ratings[truth], ratings[~truth]
    sorted_normal, sorted_diseased = np.sort(normal), np.sort(diseased)
    below = np.searchsorted(sorted_normal, diseased, side="left")
    tied = np.searchsorted(sorted_normal, diseased, side="right") - below
    v10 = (below + 0.5 * tied) / len(normal)
    above = len(diseased) - np.searchsorted(sorted_diseased, normal, side="right")
    tied_n = np.searchsorted(sorted_diseased, normal, side="right") - np.searchsorted(
        sorted_diseased, normal, side="left")
    v01 = (above + 0.5 * tied_n) / len(diseased)
    return v10, v01


def auc_and_jackknife(ratings: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ratings: modalities x readers x cases. Returns the AUCs (modalities x readers) and the
    leave-one-case-out AUCs (modalities x readers x cases)."""
    t, r, k = ratings.shape
    n1, n0 = int(truth.sum()), int((~truth).sum())
    auc = np.empty((t, r))
    jack = np.empty((t, r, k))
    for i in range(t):
        for j in range(r):
            v10, v01 = _placements(ratings[i, j], truth)
            theta = v10.mean()
            auc[i, j] = theta
            jack[i, j, truth] = (n1 * theta - v10) / (n1 - 1)
            jack[i, j, ~truth] = (n0 * theta - v01) / (n0 - 1)
    return auc, jack
