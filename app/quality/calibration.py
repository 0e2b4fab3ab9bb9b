"""How well the judge's score and verdicts match the readers, on the edits a study read,
weighted back to the population the study sampled (a validation study reads the judge's
failures more often than the data set holds them; unweighted, every rate would describe the
sample, not the data set).

- The score's ROC curve and area against the readers' overall consensus, with the cluster
  bootstrap over source images; a reliability table (score bins against the share readers
  passed); sensitivity and specificity at the paper's threshold of 0.7 and at the threshold
  that matches the readers best (Youden).
- Per question, the judge's yes/no answer against the readers': sensitivity, specificity,
  agreement.
- Where the judge fails: disease x direction x round groups of read edits ranked by how often
  the judge and the readers disagreed, with the failure tags the readers chose there.

The score is the judge's stored weighted score where every read edit has one (pipeline
verdicts). Imported runs never stored one; there it is the paper's rubric weights over the
judge's yes/no answers, renormalised over the dimensions it answered, and the page says so.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlmodel import Session, col, select

from app.agreement.roc import Bin, Figure, RocPoint, area, best_threshold, curve, rates, reliability
from app.charts import reliability_chart, roc_chart
from app.models import JudgeVerdict
from app.quality.population import Frame, Labels
from pipeline.vocabulary import DIMENSIONS, QUESTIONS, WEIGHTS, Dimension

__all__ = ["DERIVED", "PAPER_THRESHOLD", "STORED", "Calibration", "Figure", "calibration"]

PAPER_THRESHOLD = 0.7
STORED = "the judge's weighted score, as stored with each verdict"
DERIVED = ("the paper's rubric weights (compliance 40 %, structure 25 %, realism 20 %, fidelity "
           "15 %) over the judge's yes/no answers, renormalised over the dimensions it answered: "
           "the imported runs stored no weighted score")
MIN_EACH = 5  # read edits the readers passed, and failed, before a curve means anything
FAILURE_ROWS = 15
_CHUNK = 5000  # ids per IN list: SQLite's variable limit is far above, and stays so


@dataclass(frozen=True)
class ThresholdRow:
    label: str
    threshold: float
    sensitivity: Figure
    specificity: Figure
    agreement: Figure

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "threshold": self.threshold,
                "sensitivity": self.sensitivity.as_dict(),
                "specificity": self.specificity.as_dict(), "agreement": self.agreement.as_dict()}


@dataclass(frozen=True)
class FailureRow:
    disease: str
    direction: str
    round: int
    reads: int  # read edits in the group
    disagree: int
    too_strict: int  # the judge failed what the readers passed
    too_lenient: int  # the judge passed what the readers failed
    tags: list[tuple[str, int]]  # the readers' failure tags on the disagreements, most chosen first

    @property
    def rate(self) -> float:
        return self.disagree / self.reads if self.reads else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"disease": self.disease, "direction": self.direction, "round": self.round,
                "reads": self.reads, "disagree": self.disagree, "rate": self.rate,
                "too_strict": self.too_strict, "too_lenient": self.too_lenient,
                "tags": [{"tag": t, "count": n} for t, n in self.tags]}


@dataclass
class Calibration:
    reads: int = 0  # read edits with a consensus and a judge verdict
    images: int = 0
    score_source: str | None = None
    reason: str | None = None  # why there is no curve
    auc: Figure | None = None
    roc: list[RocPoint] = field(default_factory=list)
    bins: list[Bin] = field(default_factory=list)
    thresholds: list[ThresholdRow] = field(default_factory=list)
    questions: dict[str, dict[str, Figure]] = field(default_factory=dict)
    failures: list[FailureRow] = field(default_factory=list)
    _charts: dict[str, str] | None = field(default=None, repr=False)

    def charts(self) -> dict[str, str]:
        """The ROC curve and the reliability diagram as SVG, drawn once per report (the page
        wants them, the JSON does not)."""
        if self._charts is None:
            marks = []
            for row in self.thresholds:
                if row.sensitivity.value is not None and row.specificity.value is not None:
                    marks.append((f"{row.label}: {row.threshold:.2f}", 1 - row.specificity.value,
                                  row.sensitivity.value))
            auc = self.auc.value if self.auc else None
            self._charts = {
                "roc": roc_chart([(p.false_positive_rate, p.true_positive_rate) for p in self.roc],
                                 marks, f"ROC, judge's score vs readers (AUC {auc:.3f})"
                                 if auc is not None else "ROC, judge's score vs readers"),
                "reliability": reliability_chart([(b.mean_score, b.passed, b.n) for b in self.bins],
                                                 "Reliability: score vs readers' passes"),
            }
        return self._charts

    def as_dict(self) -> dict[str, Any]:
        return {"reads": self.reads, "source_images": self.images,
                "score_source": self.score_source, "reason": self.reason,
                "auc": self.auc.as_dict() if self.auc else None,
                "roc": [{"threshold": p.threshold if np.isfinite(p.threshold) else None,
                         "false_positive_rate": p.false_positive_rate,
                         "true_positive_rate": p.true_positive_rate} for p in self.roc],
                "reliability": [b.as_dict() for b in self.bins],
                "thresholds": [t.as_dict() for t in self.thresholds],
                "questions": {q: {k: f.as_dict() for k, f in figures.items()}
                              for q, figures in self.questions.items()},
                "failures": [f.as_dict() for f in self.failures]}


def calibration(session: Session, frame: Frame, labels: Labels) -> Calibration:
    truth_all = labels.consensus["overall"]
    judged = ~np.isnan(frame.judge["overall"])
    read = np.flatnonzero(~np.isnan(truth_all) & judged & (labels.inclusion > 0))
    result = Calibration(reads=len(read), images=len(np.unique(frame.clusters[read])))
    if not len(read):
        result.reason = "No read edit has both a consensus and a judge verdict yet."
        return result
    weights = 1 / labels.inclusion[read]
    clusters = frame.clusters[read]
    for question in QUESTIONS:
        truth, answer = labels.consensus[question][read], frame.judge[question][read]
        both = ~np.isnan(truth) & ~np.isnan(answer)
        if both.sum():
            result.questions[question] = rates(truth[both] == 1, answer[both] == 1,
                                               weights=weights[both], clusters=clusters[both])
    truth = truth_all[read] == 1
    result.failures = _failures(frame, labels, read)
    score, result.score_source = _scores(session, frame, labels, read)
    passed, failed = int(truth.sum()), int((~truth).sum())
    if passed < MIN_EACH or failed < MIN_EACH:
        result.reason = (f"The readers passed {passed} and failed {failed} of the read edits: a "
                         f"curve needs at least {MIN_EACH} of each.")
        return result
    if len(np.unique(score)) < 2:
        result.reason = "The judge gave every read edit the same score: there is no curve to draw."
        return result
    result.auc = area(truth, score, weights=weights, clusters=clusters)
    result.roc = curve(truth, score, weights=weights)
    result.bins = reliability(truth, score, weights=weights)
    best = best_threshold(result.roc)
    marks = [("the paper's threshold", PAPER_THRESHOLD)]
    if best is not None:
        marks.append(("best match with the readers (Youden)", best.threshold))
    for label, threshold in marks:
        figures = rates(truth, score >= threshold - 1e-12, weights=weights, clusters=clusters)
        result.thresholds.append(ThresholdRow(label, threshold, figures["sensitivity"],
                                              figures["specificity"], figures["agreement"]))
    return result


def _scores(session: Session, frame: Frame, labels: Labels,
            read: np.ndarray) -> tuple[np.ndarray, str]:
    """Each read edit's score: the stored weighted score if every one has it, else derived."""
    ids = [labels.verdicts.get(int(i)) for i in read]
    stored: dict[int, float | None] = {}
    wanted = [i for i in ids if i is not None]
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start:start + _CHUNK]
        stored.update({verdict_id: value for verdict_id, value in session.execute(
            select(col(JudgeVerdict.id), col(JudgeVerdict.weighted_score))
            .where(col(JudgeVerdict.id).in_(chunk)))})
    values = [stored.get(i) if i is not None else None for i in ids]
    if all(v is not None for v in values):
        return np.asarray(values, dtype=float), STORED
    weight = np.array([WEIGHTS[Dimension(d)] for d in DIMENSIONS])
    answers = np.column_stack([frame.judge[d][read] for d in DIMENSIONS])
    present = ~np.isnan(answers)
    with np.errstate(all="ignore"):
        derived = (np.nan_to_num(answers) * weight).sum(axis=1) / (present * weight).sum(axis=1)
    return np.nan_to_num(derived, nan=0.0), DERIVED


def _failures(frame: Frame, labels: Labels, read: np.ndarray) -> list[FailureRow]:
    groups: dict[tuple[str, str, int], list[int]] = {}
    for i in read.tolist():
        key = (str(frame.facets["disease"][i]), str(frame.facets["direction"][i]),
               labels.rounds.get(i, 0))
        groups.setdefault(key, []).append(i)
    rows = []
    for (disease, direction, round_), members in groups.items():
        truth = labels.consensus["overall"][members] == 1
        judge = frame.judge["overall"][members] == 1
        strict, lenient = int((truth & ~judge).sum()), int((~truth & judge).sum())
        chosen: Counter[str] = Counter()
        for i, t, j in zip(members, truth, judge, strict=True):
            if t != j:
                chosen.update(labels.tags.get(i, Counter()))
        rows.append(FailureRow(disease, direction, round_, len(members), strict + lenient,
                               strict, lenient, chosen.most_common(3)))
    rows = [r for r in rows if r.disagree]
    rows.sort(key=lambda r: (-r.disagree, -r.rate, r.disease, r.direction, r.round))
    return rows[:FAILURE_ROWS]
