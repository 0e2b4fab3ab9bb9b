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

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import choix
import numpy as np
from scipy.optimize import minimize

from app.agreement.multirater import alpha_from_coincidences, coincidences
from app.agreement.resample import RESAMPLES, SEED, ClusterBootstrap, Figure

# A strength is reported relative to the first item (log-strength 0), as BTm does.
REFERENCE = 0
# Beyond these a fit is taken as running off to infinity (an item that only wins, ties that
# swamp everything in a handful of reads), not as an estimate: odds of 3,000 to 1 between
# two edits, or a tie 50 times likelier than a preference between equals.
MAX_LOG_STRENGTH = 8.0
MAX_TIE = 50.0


def plausible(found: "Strengths") -> bool:
    """Whether a fit is an estimate rather than a likelihood climbing towards a boundary."""
    return bool(np.all(np.isfinite(found.log_strength))
                and np.max(np.abs(found.log_strength)) <= MAX_LOG_STRENGTH
                and (found.tie is None or (np.isfinite(found.tie) and found.tie <= MAX_TIE)))


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


def _davidson(items: int, wins: np.ndarray, tied: np.ndarray, *, with_ties: bool = True,
              start: Strengths | None = None) -> Strengths:
    """``start``: a fit of similar counts to begin from (the whole sample's, for a resample)."""
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

    begin = np.zeros(len(free) + (1 if with_ties else 0))
    if start is not None:
        begin[:len(free)] = start.log_strength[free]
    if with_ties:  # nu's moment start: the share of ties
        begin[-1] = (np.log(start.tie) if start is not None and start.tie else
                     np.log(max(tied.sum(), 0.5) / max(np.triu(pairs, 1).sum(), 1.0)))
    found = minimize(negative_log_likelihood, begin, jac=True, method="BFGS",
                     options={"gtol": 1e-9, "maxiter": 2000})
    theta, nu = unpack(found.x)
    return Strengths(theta, nu if with_ties else None)


# What a reader said of a pair: the first edit better, the second, both acceptable and equal,
# or both unacceptable (no preference: out of the strengths, counted on its own).
FIRST, SECOND, EQUAL, NEITHER = "first", "second", "equal", "neither"
CHOICES = (FIRST, SECOND, EQUAL, NEITHER)


@dataclass(frozen=True)
class PairRead:
    """One read of a pair: which items its edits are (a round index, an editor), what the
    reader chose, whether the first edit was shown on the left, and its source image."""

    first: int
    second: int
    choice: str
    first_left: bool
    cluster: Hashable


@dataclass(frozen=True)
class StrengthFigures:
    """Each item's log-strength against the first item's (0, no interval), and the tie
    propensity (None without ties); with cluster-bootstrap intervals over source images."""

    log_strength: list[Figure]
    tie: Figure | None
    n: int  # reads with a preference or a tie
    neither: int  # reads that found both unacceptable, left out
    ties: int = 0  # reads that found both equal


def strength_figures(items: int, reads: Sequence[PairRead], *,
                     resamples: int = RESAMPLES, seed: int = SEED,
                     order: tuple[str, str] = ("first", "last")) -> StrengthFigures:
    """The strengths from every read that prefers one edit or finds them equal, refitted on
    each resample of the source images. ``order`` names the items' two ends ("earlier",
    "later" for rounds), for saying why a fit has no finite estimate."""
    used = [r for r in reads if r.choice != NEITHER]
    neither = len(reads) - len(used)
    equal_reads = sum(r.choice == EQUAL for r in used)
    if not used:
        return StrengthFigures([Figure(None) for _ in range(items)], None, 0, neither)
    features = np.zeros((len(used), 2 * items * items))
    for row, read in enumerate(used):
        if read.choice == EQUAL:
            features[row, items * items + read.first * items + read.second] = 1
        else:
            winner, loser = ((read.first, read.second) if read.choice == FIRST
                             else (read.second, read.first))
            features[row, winner * items + loser] = 1
    boot = ClusterBootstrap([r.cluster for r in used], resamples=resamples, seed=seed)
    total, resampled, jackknife, clusters = boot.resampled(features)
    wins, ties = _counts(total, items)
    with_ties = bool(ties.any())
    if not _estimable(wins + ties + ties.T):
        # An item never compared, or never preferred: its strength is not finite, here or
        # in the resamples; saying nothing is the honest figure.
        return StrengthFigures([Figure(None, n=len(used), clusters=clusters,
                                       warning=_why_unbounded(wins, ties, order, never=True))
                                for _ in range(items)], None, len(used), neither, equal_reads)
    whole = fit(items, wins, ties)
    if not plausible(whole):
        return StrengthFigures([Figure(None, n=len(used), clusters=clusters,
                                       warning=_why_unbounded(wins, ties, order))
                                for _ in range(items)], None, len(used), neither, equal_reads)

    def fitted(sums: np.ndarray) -> np.ndarray:
        """Each row's log-strengths and tie propensity; NaN where the fit is undefined (an
        item never compared, or compared and never preferred, has no finite strength), or
        runs off to infinity."""
        found = np.full((len(sums), items + 1), np.nan)
        square = items * items
        won = sums[:, :square].reshape(-1, items, items)
        tied = sums[:, square:].reshape(-1, items, items)
        tied = np.triu(tied + tied.transpose(0, 2, 1), 1)
        keep = np.array([_estimable(w + t + t.T) for w, t in zip(won, tied, strict=True)],
                        dtype=bool)
        if not keep.any():
            return found
        theta, nu = refit_many(items, won[keep], tied[keep], with_ties, whole)
        rows = np.flatnonzero(keep)
        for k, row in enumerate(rows):
            one = Strengths(theta[k], float(nu[k]) if with_ties else None)
            if plausible(one):
                found[row, :items] = theta[k]
                found[row, items] = nu[k] if with_ties else np.nan
        return found

    value = np.append(whole.log_strength, whole.tie if whole.tie is not None else np.nan)
    boot_fits, jack_fits = fitted(resampled), fitted(jackknife)
    figures = boot.figures_of_fits([(float(value[k]), boot_fits[:, k], jack_fits[:, k])
                                    for k in range(items + 1)], clusters=clusters, n=len(used))
    strengths = [Figure(0.0, n=len(used), clusters=clusters), *figures[1:items]]
    tie = figures[items] if with_ties else None
    return StrengthFigures(strengths, tie, len(used), neither, equal_reads)


def _why_unbounded(wins: np.ndarray, ties: np.ndarray, order: tuple[str, str], *,
                   never: bool = False) -> str:
    """Why the strengths climb without bound: every read went one way (no read preferred the
    earlier round, say), which no number of further such reads changes; else too few reads."""
    toward_first = float(np.triu(wins, 1).sum())  # the lower-numbered item of a pair preferred
    toward_last = float(np.tril(wins, -1).sum())
    if not ties.any():
        first, last = order
        if toward_first == 0 and toward_last > 0:
            return (f"no read preferred the {first} edit of its pair: every read preferred "
                    f"the {last}, so the strengths have no finite estimate")
        if toward_last == 0 and toward_first > 0:
            return (f"no read preferred the {last} edit of its pair: every read preferred "
                    f"the {first}, so the strengths have no finite estimate")
    if never:
        return "an edit never preferred, or never compared, has no finite strength"
    return "the fit runs off to infinity: too few reads"


def _counts(flat: np.ndarray, items: int) -> tuple[np.ndarray, np.ndarray]:
    square = items * items
    return flat[:square].reshape(items, items), flat[square:].reshape(items, items)


def _estimable(compared: np.ndarray) -> bool:
    """Every item has a finite maximum-likelihood strength: the comparison graph joins them
    all, and no item has only won or only lost (Zermelo 1929; Ford 1957)."""
    items = len(compared)
    wins = compared * (1 - np.eye(items))
    for i in range(items):
        if wins[i].sum() + wins[:, i].sum() == 0:
            return False
        if wins[i].sum() == 0 or wins[:, i].sum() == 0:
            return False
    reach, frontier = {0}, [0]
    while frontier:
        i = frontier.pop()
        for j in range(items):
            if j not in reach and (wins[i, j] > 0 or wins[j, i] > 0):
                reach.add(j)
                frontier.append(j)
    return len(reach) == items


def share_figure(reads: Sequence[PairRead], counts: Callable[[PairRead], tuple[float, float]], *,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Figure:
    """A share over reads (numerator, denominator per read) with its cluster-bootstrap
    interval over source images."""
    return share_of([r.cluster for r in reads], [counts(r) for r in reads],
                    resamples=resamples, seed=seed)


def share_of(clusters: Sequence[Hashable], counts: Sequence[tuple[float, float]], *,
             resamples: int = RESAMPLES, seed: int = SEED) -> Figure:
    """A share of summed numerators over summed denominators, one pair per unit in its
    cluster, with its cluster-bootstrap interval."""
    features = np.array(counts, dtype=float).reshape(-1, 2)
    n = int(features[:, 1].sum())
    if n == 0:
        return Figure(None)
    boot = ClusterBootstrap(list(clusters), resamples=resamples, seed=seed)
    return boot.figure(features, lambda s: s[:, 0] / s[:, 1], n=n, bounds=(0.0, 1.0))


def readers_alpha(units: Sequence[tuple[Hashable, Sequence[str]]], *,
                  resamples: int = RESAMPLES, seed: int = SEED) -> Figure:
    """Krippendorff's alpha, nominal over the four answers, of the readers of each pair read
    by two or more (``units``: its source image and its readers' answers); the coincidence
    matrices are summed per resample (app/agreement/multirater.py, held to Krippendorff's
    published example)."""
    rated = [(cluster, answers) for cluster, answers in units if len(answers) >= 2]
    if not rated:
        return Figure(None)
    counts = np.array([[list(answers).count(c) for c in CHOICES] for _, answers in rated],
                      dtype=float)
    boot = ClusterBootstrap([cluster for cluster, _ in rated], resamples=resamples, seed=seed)
    return boot.figure(coincidences(counts), alpha_from_coincidences, n=len(rated))


def later_preferred(reads: Sequence[PairRead], **kwargs: int) -> Figure:
    """Of the reads of consecutive rounds that prefer one edit (first: round k, second:
    round k + 1), the share that prefer the later round."""
    return share_figure(reads, lambda r: (float(r.choice == SECOND),
                                          float(r.choice in (FIRST, SECOND))), **kwargs)


def left_preferred(reads: Sequence[PairRead], **kwargs: int) -> Figure:
    """Position bias: of the reads that prefer one edit, the share that prefer the one shown
    on the left (0.5 without bias)."""
    def counts(r: PairRead) -> tuple[float, float]:
        if r.choice not in (FIRST, SECOND):
            return 0.0, 0.0
        return float((r.choice == FIRST) == r.first_left), 1.0
    return share_figure(reads, counts, **kwargs)


def refit_many(items: int, wins: np.ndarray, tied: np.ndarray, with_ties: bool,
               start: Strengths, *, iterations: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Davidson's (or, without ties, Bradley-Terry's) fit of many count tables at once (a
    bootstrap's resamples): damped Newton steps from ``start``, the Hessian from differences
    of the analytic gradient, every table stepped together. The same likelihood as
    ``_davidson``, and the tests hold the two to the same fits; a table whose fit has not
    settled after ``iterations`` is NaN (left out of the interval, and counted)."""
    free = [i for i in range(items) if i != REFERENCE]
    size = len(free) + (1 if with_ties else 0)
    count = len(wins)
    x = np.zeros((count, size))
    x[:, :len(free)] = start.log_strength[free]
    if with_ties:
        x[:, -1] = np.log(start.tie) if start.tie else 0.0
    tied_both = tied + tied.transpose(0, 2, 1)
    won = wins.sum(axis=2) + tied_both.sum(axis=2) / 2
    eye = 1 - np.eye(items)
    wins = wins * eye

    def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta = np.zeros((len(x), items))
        theta[:, free] = x[:, :len(free)]
        nu = np.exp(x[:, -1]) if with_ties else np.zeros(len(x))
        return theta, nu

    def value_and_gradient(x: np.ndarray, w: np.ndarray, t: np.ndarray, tb: np.ndarray,
                           wo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta, nu = unpack(x)
        ti, tj = theta[:, :, None], theta[:, None, :]
        top = np.maximum(ti, tj)
        own, other = np.exp(ti - top), np.exp(tj - top)
        shared = nu[:, None, None] * np.exp((ti + tj) / 2 - top)
        total = own + other + shared
        log_d = top + np.log(total)
        value = np.sum(w * (ti - log_d), axis=(1, 2))
        if with_ties:
            with np.errstate(divide="ignore"):
                value += np.sum(t * (np.log(nu)[:, None, None] + (ti + tj) / 2 - log_d), axis=(1, 2))
        toward = (own + shared / 2) / total
        gradient = wo - np.sum((w + w.transpose(0, 2, 1) + tb) * toward, axis=2)
        parts = [gradient[:, free]]
        if with_ties:
            share = shared / total
            parts.append((np.sum(t * (1 - share), axis=(1, 2))
                          - np.sum(w * share, axis=(1, 2)))[:, None])
        return -value, -np.concatenate(parts, axis=1)

    active = np.ones(count, dtype=bool)
    step = 1e-5
    for _ in range(iterations):
        if not active.any():
            break
        at = np.flatnonzero(active)
        args = (wins[at], tied[at], tied_both[at], won[at])
        value, gradient = value_and_gradient(x[at], *args)
        settled = np.max(np.abs(gradient), axis=1) < 1e-7 * (1 + np.abs(value))
        hessian = np.empty((len(at), size, size))
        for k in range(size):
            shift = np.zeros(size)
            shift[k] = step
            hessian[:, :, k] = (value_and_gradient(x[at] + shift, *args)[1]
                                - value_and_gradient(x[at] - shift, *args)[1]) / (2 * step)
        hessian = (hessian + hessian.transpose(0, 2, 1)) / 2 + 1e-10 * np.eye(size)
        try:
            move = -np.linalg.solve(hessian, gradient[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            move = -gradient  # a singular table: a gradient step instead
        scale = np.ones(len(at))
        for _ in range(30):  # halve each table's step until its likelihood does not fall
            trial, _ = value_and_gradient(x[at] + scale[:, None] * move, *args)
            worse = ~(trial <= value + 1e-12) & ~settled
            if not worse.any():
                break
            scale[worse] /= 2
        x[at[~settled]] += scale[~settled, None] * move[~settled]
        active[at[settled]] = False
    theta, nu = unpack(x)
    theta[active] = np.nan
    nu = np.where(active, np.nan, nu)
    return theta, nu
