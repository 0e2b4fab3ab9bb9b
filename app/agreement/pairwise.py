"""Paired comparisons: which of two edits readers prefer, as Bradley-Terry strengths.

Without ties the strengths are the Bradley-Terry maximum-likelihood estimates, fitted by
choix (held in the tests to the published fit of Agresti's journal citations). With ties,
Davidson's (1970) model: item i is preferred to j with probability
π_i / (π_i + π_j + nu√(π_i π_j)), and the two are judged equal with probability
nu√(π_i π_j) / (π_i + π_j + nu√(π_i π_j)); nu ≥ 0 is the propensity to tie. Its likelihood is
maximised with scipy over the log-strengths (the first item's fixed at 0) and log nu.

"Both unacceptable" is not a tie: it says nothing about which edit is better, so it is left
out of the strengths and reported on its own by the pairwise design.
"""

from dataclasses import dataclass

import choix
import numpy as np
from scipy.optimize import minimize

# A strength is reported relative to the first item (log-strength 0), as BTm does.
REFERENCE = 0


@dataclass(frozen=True)
class Strengths:
    """Log-strengths, the first item's 0; ``tie`` is Davidson's nu (None: no tie was seen,
    the plain Bradley-Terry model)."""

    log_strength: np.ndarray
    tie: float | None

    def preferred(self, i: int, j: int) -> float:
        """The probability that i is preferred to j, ties aside (given one is preferred)."""
        return float(1.0 / (1.0 + np.exp(self.log_strength[j] - self.log_strength[i])))


def fit(items: int, wins: np.ndarray, ties: np.ndarray | None = None) -> Strengths:
    """``wins[i, j]``: how often i was preferred to j (weights allowed, for resampling);
    ``ties[i, j]``: how often the two were judged equal (either triangle, or both halves)."""
    wins = np.asarray(wins, dtype=float)
    tied = np.triu(ties + ties.T, 1) if ties is not None else np.zeros_like(wins)
    if not tied.any():
        return Strengths(_bradley_terry(items, wins), None)
    return _davidson(items, wins, tied)


def _bradley_terry(items: int, wins: np.ndarray) -> np.ndarray:
    """choix takes a list of (winner, loser); integer counts are listed, weighted ones
    (a bootstrap resample) go through the same likelihood as Davidson's with nu = 0."""
    if np.allclose(wins, np.round(wins)):
        data = [(i, j) for i in range(items) for j in range(items) for _ in range(int(wins[i, j]))]
        found = np.asarray(choix.opt_pairwise(items, data, alpha=0.0))
        return found - found[REFERENCE]
    return _davidson(items, wins, np.zeros_like(wins), with_ties=False).log_strength


def _davidson(items: int, wins: np.ndarray, tied: np.ndarray, *,
              with_ties: bool = True) -> Strengths:
    free = [i for i in range(items) if i != REFERENCE]
    pairs = wins + wins.T + tied + tied.T  # comparisons of each pair, both orders
    wins = wins * (1 - np.eye(items))  # an item against itself tells nothing

    def unpack(x: np.ndarray) -> tuple[np.ndarray, float]:
        theta = np.zeros(items)
        theta[free] = x[:len(free)]
        return theta, (float(np.exp(x[-1])) if with_ties else 0.0)

    tied_both = tied + tied.T  # ties of each pair, seen from either item
    won = wins.sum(axis=1) + tied_both.sum(axis=1) / 2  # what the score equations balance

    def negative_log_likelihood(x: np.ndarray) -> tuple[float, np.ndarray]:
        """Its value and gradient (Davidson's likelihood equations are the gradient at 0)."""
        theta, nu = unpack(x)
        ti, tj = theta[:, None], theta[None, :]
        # D_ij = π_i + π_j + nu√(π_i π_j), on the log scale, stably.
        top = np.maximum(ti, tj)
        own, other, shared = np.exp(ti - top), np.exp(tj - top), nu * np.exp((ti + tj) / 2 - top)
        denominator = top + np.log(own + other + shared)
        value = np.sum(wins * (ti - denominator))
        if with_ties:
            value += np.sum(tied * (np.log(nu) + (ti + tj) / 2 - denominator))
        total = own + other + shared
        toward_i = (own + shared / 2) / total  # d log D_ij / d θ_i
        gradient = won - np.sum((wins + wins.T + tied_both) * toward_i, axis=1)
        grad = [gradient[free]]
        if with_ties:
            tie_share = shared / total  # d log D_ij / d log nu
            grad.append(np.array([np.sum(tied * (1 - tie_share)) - np.sum(wins * tie_share)]))
        return -float(value), -np.concatenate(grad)

    start = np.zeros(len(free) + (1 if with_ties else 0))
    if with_ties:  # nu's moment start: the share of ties
        start[-1] = np.log(max(tied.sum(), 0.5) / max(np.triu(pairs, 1).sum(), 1.0))
    found = minimize(negative_log_likelihood, start, jac=True, method="BFGS",
                     options={"gtol": 1e-9, "maxiter": 2000})
    theta, nu = unpack(found.x)
    return Strengths(theta, nu if with_ties else None)
