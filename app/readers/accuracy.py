"""Each reader's accuracy, from their reads of one study: against the settled answers of the
known-answer cases and against the other readers' consensus, per question, with sensitivity
and specificity, time per case, and how both change along the session (fatigue) and with the
reader's confidence (calibration).

Every rate carries its exact (Clopper-Pearson) 95 % interval and its n. The interval treats a
reader's reads as independent; reads of one source image are not quite, so it is a little
narrow for a reader who read many edits of few images (the agreement report's cluster
bootstrap is the figure to cite for that). A rate with no reads has no interval at all.
"""

import itertools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from statistics import median

import numpy as np
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint
from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

from app.agreement.reads import vote
from app.readers.flags import Assigned, complete_consensus
from app.readers.reads import ReaderRead
from pipeline.vocabulary import QUESTIONS

CONFIDENCE = 0.95
PARTS = 3  # the session is cut into thirds for fatigue


@dataclass(frozen=True)
class Rate:
    """k of n, with its exact interval (None when n is 0)."""

    k: int
    n: int
    low: float | None = None
    high: float | None = None

    @property
    def share(self) -> float | None:
        return self.k / self.n if self.n else None

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "share": self.share}


def exact(k: int, n: int) -> Rate:
    """Clopper-Pearson: the interval that never covers less than 95 %, whatever the rate."""
    if n == 0:
        return Rate(0, 0)
    low, high = proportion_confint(k, n, alpha=1 - CONFIDENCE, method="beta")
    return Rate(k, n, float(low), float(high))


def _rate(outcomes: Iterable[bool]) -> Rate:
    found = list(outcomes)
    return exact(sum(found), len(found))


@dataclass(frozen=True)
class QuestionAccuracy:
    question: str
    known: Rate  # agreement with the settled answers
    sensitivity: Rate  # of the settled failing answers, the share the reader failed
    specificity: Rate  # of the settled passing answers, the share the reader passed
    consensus: Rate  # agreement with the other readers' consensus (ordinary cases)


@dataclass(frozen=True)
class Part:
    """One part of the session (a third of the reader's order)."""

    first: int
    last: int  # positions in the order, inclusive
    known: Rate
    consensus: Rate
    median_seconds: float | None
    reads: int


@dataclass(frozen=True)
class Trend:
    """A change per 10 reads along the session, with its 95 % interval: the odds ratio of
    agreeing with the consensus, and the ratio of time per case."""

    per_ten: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class ReaderAccuracy:
    reader: str
    user_id: int
    reads: int
    known_reads: int
    known: Rate  # every settled answer of every known-answer case, pooled
    questions: list[QuestionAccuracy]
    median_seconds: float | None
    quartile_seconds: tuple[float, float] | None
    timed: int  # reads with a time
    fatigue: list[Part] = field(default_factory=list)
    agreement_trend: Trend | None = None
    time_trend: Trend | None = None
    # Confidence given -> (accept / reject right on known cases, agreeing with the consensus).
    calibration: dict[int, tuple[Rate, Rate]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return asdict(self) | {
            "known": self.known.as_dict(),
            "questions": [{"question": q.question, "known": q.known.as_dict(),
                           "sensitivity": q.sensitivity.as_dict(),
                           "specificity": q.specificity.as_dict(),
                           "consensus": q.consensus.as_dict()} for q in self.questions],
            "fatigue": [asdict(p) | {"known": p.known.as_dict(), "consensus": p.consensus.as_dict()}
                        for p in self.fatigue],
            "calibration": {str(c): {"known": k.as_dict(), "consensus": m.as_dict()}
                            for c, (k, m) in sorted(self.calibration.items())}}


def no_reads(reader: str, user_id: int) -> ReaderAccuracy:
    """A reader with nothing read yet: every rate without an n, so without an interval."""
    nothing = Rate(0, 0)
    return ReaderAccuracy(reader, user_id, 0, 0, nothing,
                          [QuestionAccuracy(q, nothing, nothing, nothing, nothing) for q in QUESTIONS],
                          None, None, 0)


def consensus_of_others(reads: Sequence[ReaderRead]) -> dict[tuple[str, int], dict[str, bool]]:
    """(reader, item) -> question -> the strict majority of the other readers' first reads of
    the ordinary cases; a question the others split evenly on, or left open, is absent."""
    by_item: dict[int, list[ReaderRead]] = {}
    for read in reads:
        if not read.repeat and not read.known:
            by_item.setdefault(read.item_id, []).append(read)
    found: dict[tuple[str, int], dict[str, bool]] = {}
    for item_id, given in by_item.items():
        for read in given:
            others = [o for o in given if o.reader != read.reader]
            settled: dict[str, bool] = {}
            for q in QUESTIONS:
                votes = [v for o in others if (v := vote(o.answers[q])) is not None]
                passes = sum(votes)
                if votes and passes * 2 != len(votes):
                    settled[q] = passes * 2 > len(votes)
            found[(read.reader, item_id)] = settled
    return found


def _known_outcomes(read: ReaderRead, questions: Iterable[str]) -> list[bool]:
    """Right or not on each settled question ("cannot assess" is not right)."""
    assert read.settled is not None
    return [read.answers[q] == read.settled[q] for q in questions if q in read.settled]


def _consensus_outcomes(read: ReaderRead, consensus: dict[str, bool],
                        questions: Iterable[str]) -> list[bool]:
    return [vote(read.answers[q]) == consensus[q] for q in questions if q in consensus]


def reader_accuracy(reads: Sequence[ReaderRead],
                    assigned: Assigned | None = None) -> list[ReaderAccuracy]:
    """Every reader's accuracy, in the readers' name order. ``assigned`` (item -> its
    readers): agreement with the others on complete cases only, every other reader assigned
    to the case having answered it (app/readers/flags.py says why)."""
    if assigned is None:
        consensus = consensus_of_others(reads)
    else:
        name = {r.user_id: r.reader for r in reads}
        consensus = {(name[u], item): c for (u, item), c in complete_consensus(reads, assigned).items()}
    by_reader: dict[str, list[ReaderRead]] = {}
    for read in reads:
        by_reader.setdefault(read.reader, []).append(read)
    return [_one(own, consensus) for _, own in sorted(by_reader.items())]


def _one(own: list[ReaderRead], consensus: dict[tuple[str, int], dict[str, bool]]) -> ReaderAccuracy:
    known = [r for r in own if r.known]
    first = [r for r in own if not r.known and not r.repeat]
    questions = []
    for q in QUESTIONS:
        settled = [r for r in known if r.settled and q in r.settled]
        failing = [r for r in settled if vote(r.settled[q]) is False]  # type: ignore[index]
        passing = [r for r in settled if vote(r.settled[q]) is True]  # type: ignore[index]
        questions.append(QuestionAccuracy(
            q, _rate(r.answers[q] == r.settled[q] for r in settled),  # type: ignore[index]
            _rate(vote(r.answers[q]) is False for r in failing),
            _rate(vote(r.answers[q]) is True for r in passing),
            _rate(o for r in first for o in _consensus_outcomes(
                r, consensus.get((r.reader, r.item_id), {}), (q,)))))
    seconds = [r.time_ms / 1000 for r in own if r.time_ms is not None]
    quartiles = tuple(float(x) for x in np.percentile(seconds, [25, 75])) if seconds else None
    return ReaderAccuracy(
        reader=own[0].reader, user_id=own[0].user_id, reads=len(own), known_reads=len(known),
        known=_rate(o for r in known for o in _known_outcomes(r, QUESTIONS)),
        questions=questions, median_seconds=median(seconds) if seconds else None,
        quartile_seconds=quartiles,  # type: ignore[arg-type]
        timed=len(seconds), fatigue=_fatigue(own, consensus),
        agreement_trend=_agreement_trend(first, consensus), time_trend=_time_trend(own),
        calibration=_calibration(known, first, consensus))


def _fatigue(own: list[ReaderRead], consensus: dict[tuple[str, int], dict[str, bool]]) -> list[Part]:
    """The order cut into thirds by position: accuracy and time in each."""
    if not own:
        return []
    last = max(r.sequence for r in own)
    edges = [round(last * i / PARTS) for i in range(PARTS + 1)]
    parts = []
    for start, end in itertools.pairwise(edges):
        inside = [r for r in own if start < r.sequence <= end]
        if end <= start:
            continue
        seconds = [r.time_ms / 1000 for r in inside if r.time_ms is not None]
        parts.append(Part(
            start + 1, end,
            _rate(o for r in inside if r.known for o in _known_outcomes(r, QUESTIONS)),
            _rate(o for r in inside if not r.known and not r.repeat
                  for o in _consensus_outcomes(r, consensus.get((r.reader, r.item_id), {}),
                                               ("overall",))),
            median(seconds) if seconds else None, len(inside)))
    return parts


def _agreement_trend(first: list[ReaderRead],
                     consensus: dict[tuple[str, int], dict[str, bool]]) -> Trend | None:
    """Logistic regression of agreeing with the consensus on accept / reject on the position."""
    rows = [(r.sequence, o) for r in first
            for o in _consensus_outcomes(r, consensus.get((r.reader, r.item_id), {}), ("overall",))]
    if len(rows) < 10 or len({o for _, o in rows}) < 2:
        return None
    x = sm.add_constant(np.array([p for p, _ in rows], dtype=float) / 10)
    y = np.array([o for _, o in rows], dtype=float)
    try:
        with warnings.catch_warnings():  # separation means no trend can be fitted: say none
            warnings.simplefilter("error", PerfectSeparationWarning)
            fit = sm.GLM(y, x, family=sm.families.Binomial()).fit()
    except (ValueError, np.linalg.LinAlgError, PerfectSeparationWarning):
        return None
    low, high = fit.conf_int(alpha=1 - CONFIDENCE)[1]
    if not np.all(np.isfinite([fit.params[1], low, high])):
        return None
    return Trend(float(np.exp(fit.params[1])), float(np.exp(low)), float(np.exp(high)), len(rows))


def _time_trend(own: list[ReaderRead]) -> Trend | None:
    """Least squares of the log of time per case on the position: the ratio per 10 reads."""
    rows = [(r.sequence, r.time_ms) for r in own if r.time_ms and r.time_ms > 0]
    if len(rows) < 10 or len({p for p, _ in rows}) < 2:
        return None
    x = sm.add_constant(np.array([p for p, _ in rows], dtype=float) / 10)
    y = np.log(np.array([t for _, t in rows], dtype=float))
    fit = sm.OLS(y, x).fit()
    low, high = fit.conf_int(alpha=1 - CONFIDENCE)[1]
    return Trend(float(np.exp(fit.params[1])), float(np.exp(low)), float(np.exp(high)), len(rows))


def _calibration(known: list[ReaderRead], first: list[ReaderRead],
                 consensus: dict[tuple[str, int], dict[str, bool]]) -> dict[int, tuple[Rate, Rate]]:
    """Per confidence the reader gave: accept / reject right on the known-answer cases, and in
    agreement with the consensus on the others."""
    levels = sorted({r.confidence for r in [*known, *first]})
    return {c: (_rate(o for r in known if r.confidence == c for o in _known_outcomes(r, ("overall",))),
                _rate(o for r in first if r.confidence == c
                      for o in _consensus_outcomes(r, consensus.get((r.reader, r.item_id), {}),
                                                   ("overall",))))
            for c in levels}
