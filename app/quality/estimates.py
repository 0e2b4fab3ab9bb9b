"""One row of the quality table: for a set of edits and a question, the judge's raw rate, the
PPI++ estimate, the readers-only estimate, the Rogan-Gladen correction (whole populations
only: its bootstrap is the slow part), and how many more reads would narrow the interval to
the target. Every figure is a share of edits a radiologist would pass, in [0, 1]."""

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from app.agreement.rogan_gladen import rogan_gladen
from app.quality.ppi import PpiEstimate, classical_mean, labels_needed, ppi_correlation, ppi_mean

# Below this many read edits (or source images) a part gets no estimate: the normal interval
# of a share needs more than a handful of clusters, and its variance more than a dozen reads
# (twelve that nearly all agreed gave 96.0 % (93.9-98.1), called enough).
MIN_READS = 30
MIN_IMAGES = 5
CONFIDENCE = 0.95
Z = float(stats.norm.ppf(1 - (1 - CONFIDENCE) / 2))


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    @classmethod
    def of(cls, estimate: PpiEstimate) -> "Interval":
        return cls(min(1.0, max(0.0, estimate.value)), max(0.0, estimate.low), min(1.0, estimate.high))

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def collapsed(self) -> bool:
        """No width at all: every read edit of each stratum had the same answer (or the
        same residual), so the sample shows no spread. Not a certainty: no interval."""
        return self.high - self.low < 1e-9


@dataclass(frozen=True)
class Plan:
    """Reads (edits with a consensus) needed for the target half-width, beyond those in hand."""

    target: float
    needed: int
    more: int
    assumed: str | None = None  # why the figure rests on an assumption, when it does


@dataclass(frozen=True)
class Row:
    question: str
    edits: int  # edits of this part of the data set
    judged: int  # of which the judge answered this question
    reads: int  # of which the readers settled a consensus (edits read, not single reads)
    images: int  # source images among the reads
    judge_rate: float | None
    ppi: Interval | None
    readers: Interval | None
    rogan_gladen: Interval | None
    lam: float | None
    correlation: float | None
    plan: Plan | None
    reason: str | None = None  # why there is no PPI estimate, or what it rests on
    rogan_gladen_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Columns:
    """The frame's columns for one question, as the estimators take them; clusters and strata
    as integer codes over the whole frame, so any part is a mask."""

    judge: np.ndarray
    consensus: np.ndarray
    weights: np.ndarray  # 1 / inclusion probability; 0 where never drawn
    clusters: np.ndarray
    strata: np.ndarray


Taken = dict[tuple[str, int, int], Any]


def estimates(columns: dict[str, Columns], index: np.ndarray, *, target: float,
              with_rogan_gladen: bool = False, taken: Taken | None = None) -> dict[str, Row]:
    """Each question's row for the edits at ``index`` (positions in the frame).

    A report estimates 600 parts, the largest over 220K edits of which a few thousand are
    read: the estimators take the read edits alone (``_read_at``), and the judge's answers
    over the part are taken once for the primary line and the sensitivity lines, which share
    them. ``taken`` keeps them across calls on the same columns (one report's)."""
    taken = {} if taken is None else taken
    found = {}
    for question, column in columns.items():
        found[question] = _estimate(column, index, question, taken, target=target,
                                    with_rogan_gladen=with_rogan_gladen)
    return found


def _derived(taken: Taken, name: str, array: np.ndarray, index: np.ndarray,
             make: Callable[[], np.ndarray]) -> np.ndarray:
    """``make()``, kept under the identities of ``array`` and ``index``; both are kept with
    it, so that neither identity can be reused by another array while ``taken`` lives."""
    key = (name, id(array), id(index))
    if key not in taken:
        taken[key] = (array, index, make())
    found: np.ndarray = taken[key][2]
    return found


def _read_at(taken: Taken, consensus: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The frame positions of the edits at ``index`` that have a consensus, in the order
    ``index`` gives them. A few thousand edits are read among 220K: they are found among the
    read ones by a sorted search when ``index`` ascends (every part of a report does), not by
    taking every edit of the part."""
    read = _derived(taken, "read", consensus, consensus, lambda: np.flatnonzero(~np.isnan(consensus)))
    ascending = _derived(taken, "ascending", index, index,
                         lambda: np.asarray(bool(len(index) < 2 or np.all(index[1:] > index[:-1]))))
    if not ascending:
        return index[~np.isnan(consensus[index])]
    if not len(index):
        return index
    where = np.minimum(np.searchsorted(index, read), len(index) - 1)
    found: np.ndarray = read[index[where] == read]
    return found


def _answered(values: np.ndarray) -> np.ndarray:
    found: np.ndarray = values[~np.isnan(values)]
    return found


def estimate(columns: Columns, index: np.ndarray, question: str, *, target: float,
             with_rogan_gladen: bool = False) -> Row:
    """The row for the edits at ``index`` (positions in the frame)."""
    return estimates({question: columns}, index, target=target,
                     with_rogan_gladen=with_rogan_gladen)[question]


def _estimate(columns: Columns, index: np.ndarray, question: str, taken: Taken, *,
              target: float, with_rogan_gladen: bool) -> Row:
    judge = columns.judge
    # The judge's answers over the whole part (its raw rate, PPI's known term), kept for the
    # sensitivity lines, which share them.
    judge_answers = _derived(taken, "answers", judge, index, lambda: _answered(judge[index]))
    at = _read_at(taken, columns.consensus, index)
    y, weights, clusters, strata = (columns.consensus[at], columns.weights[at],
                                    columns.clusters[at], columns.strata[at])
    judge_read = judge[at]
    both = ~np.isnan(judge_read)
    edits, judged, reads = len(index), len(judge_answers), len(at)
    images = len(np.unique(clusters)) if reads else 0
    judge_rate = float(judge_answers.mean()) if judged else None
    short = reads < MIN_READS or images < MIN_IMAGES
    if short:
        plan = _plan(target, None, None, 0.0, edits, reads)
        short_reason = (f"{reads} edit{'s' if reads != 1 else ''} read, from {images} source "
                        f"image{'s' if images != 1 else ''}: no estimate (it needs {MIN_READS} edits "
                        f"from {MIN_IMAGES} images)")
        return Row(question, edits, judged, reads, images, judge_rate, None, None, None, None,
                   None, plan, short_reason)
    # A census of a fixed data set, read in part: the finite population correction applies.
    readers_est = classical_mean(y, weights=weights, clusters=clusters, strata=strata,
                                 alpha=1 - CONFIDENCE, drawn=1 / weights)
    readers = Interval.of(readers_est)
    ppi: Interval | None = None
    lam: float | None = None
    rho: float | None = None
    reason = None
    if judged == 0:
        reason = "the judge did not answer this question here (imported runs never scored it)"
    elif both.sum() < MIN_READS:
        reason = f"only {int(both.sum())} read edits have a judge answer: no PPI estimate"
    else:
        # A census: the judge's term is known exactly, so its clusters (clusters_all) do not
        # enter the variance.
        estimate_ = ppi_mean(y[both], judge_read[both], judge_answers, weights=weights[both],
                             clusters=clusters[both], strata=strata[both],
                             alpha=1 - CONFIDENCE, census=True, drawn=1 / weights[both])
        ppi, lam = Interval.of(estimate_), estimate_.lam
        rho = ppi_correlation(y[both], judge_read[both], weights[both])
        if np.all(judge_answers == judge_answers[0]):
            verdict = "passed" if judge_answers[0] == 1 else "failed"
            reason = (f"the judge {verdict} every edit here, so it carries no information: "
                      "the estimate is the readers' (PPI with lambda 0)")
        elif judged < edits:
            reason = (f"for the {judged:,} of {edits:,} edits the judge answered this question")
    rg = rg_reason = None
    if with_rogan_gladen and judge_rate is not None and both.sum() >= MIN_READS:
        figure = rogan_gladen(y[both] == 1, judge_read[both] == 1, judge_rate, weights=weights[both],
                              clusters=clusters[both])
        if figure.value is None:
            rg_reason = ("cannot be computed: " + (
                "the judge gave one answer throughout, so its specificity or sensitivity is "
                "unknown" if np.all(judge_read[both] == judge_read[both][0]) else
                "the readers gave one answer throughout" if np.all(y[both] == y[both][0]) else
                "the judge is no better than chance on the sample"))
        elif figure.low is None or figure.high is None:
            rg_reason = figure.warning
        else:
            rg = Interval(figure.value, figure.low, figure.high)
    shown = ppi or readers
    census = reads >= edits
    if shown.collapsed and not census:
        spread = ("every read edit of each stratum got the same answer here, so the sample "
                  "shows no spread and the normal interval has no width: no interval until "
                  "more edits are read")
        reason = f"{reason}; {spread}" if reason else spread
        # The planner cannot rest on a variance of zero: it assumes the worst case.
        plan = _plan(target, None, None, 0.0, edits, reads, why="no spread in the sample")
    else:
        plan = _plan(target, shown, readers_est.se, rho or 0.0, edits, reads)
    return Row(question, edits, judged, reads, images, judge_rate, ppi, readers, rg, lam, rho,
               plan, reason, rg_reason)


def _plan(target: float, current: Interval | None, readers_se: float | None, rho: float,
          edits: int, reads: int, why: str = "no estimate yet") -> Plan | None:
    """How many reads bring the interval to +-target: the readers' variance per read (its
    design effect included) gives the reads the readers alone would need; PPI needs fewer,
    by the judge's correlation with them (ppi_py's ppi_mean_power, with the data set as the
    limit)."""
    if edits == 0:
        return None
    if current is not None and current.half_width <= target:
        return Plan(target, reads, 0)
    assumed = None
    if readers_se is None or readers_se <= 0:
        variance_per_read = 0.25  # the worst case, a share of one half
        assumed = f"{why}: assumes a share of 50 % and no help from the judge"
        rho = 0.0
    else:
        variance_per_read = reads * readers_se ** 2
    alone = variance_per_read * (Z / target) ** 2
    needed = labels_needed(alone, rho, edits)
    return Plan(target, needed, max(0, needed - reads), assumed)
