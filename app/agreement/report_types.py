"""The agreement report's shape, typed: what the page, the standalone report, the CSV tables,
the charts and the JSON all read. ``as_dict`` is the JSON, field for field.

A comparison of two raters (app/agreement/two_raters.py) and a single figure with its
interval (app/agreement/resample.py) stay the dicts their modules make: their keys are the
published names of the statistics, read as such by every consumer.
"""

from dataclasses import asdict, dataclass, field
from typing import Any

Figure = dict[str, Any]  # one estimate: value, interval, n (resample.Figure.as_dict)
Comparison = dict[str, Any]  # two raters: every figure, the 2x2 table, McNemar (two_raters)


@dataclass(frozen=True)
class ReferenceCounts:
    decided: dict[str, int]  # how each case's reference was reached -> cases
    reader_ties: int  # every case the readers split evenly, adjudicated or not


@dataclass(frozen=True)
class Sensitivity:
    """The judge's agreement with the reference under each way of counting what the readers
    left open: ties, and "cannot assess"."""

    ties: dict[str, Figure]
    cannot_assess: dict[str, Figure]


@dataclass(frozen=True)
class QuestionReport:
    n_cases: int
    reference: ReferenceCounts
    judge_missing: int
    judge_vs_reference: Comparison
    judge_vs_reader: dict[str, Comparison]
    reader_vs_others: dict[str, Comparison]
    reader_pairs: list[dict[str, Any]]  # {"a", "b", **Comparison}
    among_readers: dict[str, Any] | None  # Fleiss, AC1, Krippendorff (readers.py)
    human_ceiling: dict[str, Any] | None  # judge-reader against reader-reader (ceiling.py)
    cannot_assess: dict[str, int]
    missing: dict[str, int]
    sensitivity: Sensitivity
    by_disease: dict[str, Comparison]


@dataclass(frozen=True)
class Intervals:
    method: str
    unit: str
    resamples: int
    seed: int
    confidence: float
    clusters: int
    warning: str | None


@dataclass(frozen=True)
class Multiplicity:
    primary: str
    secondary: list[str]
    method: str
    adjusted_p: dict[str, float | None]


@dataclass(frozen=True)
class OtherJudge:
    n_cases: int
    questions: dict[str, Comparison]


# Added by the study's service (app/agreement/service.py), which knows the study beyond its
# reads; absent from the JSON of a report made from reads alone.
STUDY_PARTS = ("facts", "achieved", "judge_self_consistency", "monitoring")


@dataclass(frozen=True)
class AgreementReport:
    slice: dict[str, list[object]]
    n_cases: int
    readers: list[str]
    intervals: Intervals
    multiplicity: Multiplicity
    questions: dict[str, QuestionReport]
    intra_reader: dict[str, dict[str, Comparison]]
    judge_b: dict[str, OtherJudge]
    facts: dict[str, Any] | None = field(default=None)
    achieved: dict[str, Any] | None = field(default=None)
    judge_self_consistency: dict[str, Any] | None = field(default=None)
    # The study's figures with their anytime-valid intervals, its targets, stopping rule and
    # outcome (app/agreement/monitoring.py).
    monitoring: dict[str, Any] | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        found = asdict(self)
        for name in STUDY_PARTS:
            if found[name] is None:
                del found[name]
        return found
