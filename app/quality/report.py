"""The quality of the whole data set, from one study (and its follow-ups): per population and
question, the corrected rates with intervals, broken down by modality, direction and disease
wherever the reads support it, and the reads each part would need. Cached until the data, a
study or an answer changes, like the overview."""

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Engine, func, select
from sqlmodel import Session, col

from app.errors import Invalid, NotFound
from app.fingerprints import data_of, study_parts
from app.fingerprints import fingerprint as data_fingerprint
from app.memo import Memo
from app.quality.anytime import AnytimeRate, anytime_rate
from app.quality.calibration import Calibration, calibration
from app.quality.estimates import (
    CONFIDENCE,
    MIN_IMAGES,
    MIN_READS,
    Columns,
    Row,
    Taken,
    estimate,
    estimates,
)
from app.quality.nonresponse import within_stratum
from app.quality.population import FACETS, Frame, Labels, encoded, family, frame_of, grouped, labels_of
from app.studies.models import Answer, Assignment, Design, Study, StudyStatus
from pipeline.vocabulary import QUESTIONS

logger = logging.getLogger(__name__)

DEFAULT_TARGET = 0.05
TARGETS = (0.01, 0.25)  # the half-widths the planner accepts
METHOD = ("Judge corrected by the reads: PPI++ (prediction-powered inference; Angelopoulos, "
          "Duchi and Zrnic 2023) with inverse-inclusion weights from the studies' recorded "
          "strata; variance summed per source image and centred within strata; "
          f"{CONFIDENCE:.0%} normal intervals. Judge corrected by its error rates: Rogan-Gladen "
          "(the judge's pass rate corrected by its sensitivity and specificity on the reads), "
          "with a cluster bootstrap over source images. Readers alone: the weighted mean of the "
          "consensus, same variance.")
MINIMUM = {"reads": MIN_READS, "source_images": MIN_IMAGES}
POPULATIONS = {
    "accepted": "accepted edits: the data set as released",
    "judged": "every judged edit: accepted edits and rejected rounds of each task's latest run",
}
# The verdict first, then the dimensions it rests on.
ORDER = ("overall", *(q for q in QUESTIONS if q != "overall"))
_kept: Memo["QualityReport"] = Memo(16)
_frames: Memo[Frame] = Memo(4)  # 220K judged edits take about 20 MB
_defaults: Memo[int] = Memo(16)  # the study chosen when none is named, per state of the studies


@dataclass
class Part:
    part: dict[str, str]  # facet -> value; empty for the whole population
    label: str
    level: int
    rows: dict[str, Row]

    def as_dict(self) -> dict[str, Any]:
        return {"part": self.part, "label": self.label, "level": self.level,
                "questions": {q: r.as_dict() for q, r in self.rows.items()}}


@dataclass
class Population:
    key: str
    label: str
    edits: int
    parts: list[Part]
    # The whole population counted with what the readers left open one way or the other:
    # policy (app/quality/population.py SENSITIVITY) -> question -> row.
    sensitivity: dict[str, dict[str, Row]] = field(default_factory=dict)
    # The acceptable rate (overall) with an interval valid at every look (app/quality/anytime.py).
    anytime: AnytimeRate | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "edits": self.edits,
                "anytime": self.anytime.as_dict() if self.anytime else None,
                "parts": [p.as_dict() for p in self.parts],
                "sensitivity": {name: {q: r.as_dict() for q, r in rows.items()}
                                for name, rows in self.sensitivity.items()}}


@dataclass
class QualityReport:
    study: dict[str, Any] | None
    target: float
    reason: str | None = None  # why there is no estimate at all
    studies: list[dict[str, Any]] = field(default_factory=list)
    populations: list[Population] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    choices: list[dict[str, Any]] = field(default_factory=list)  # studies to choose from
    calibration: Calibration | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"study": self.study, "target": self.target, "confidence": CONFIDENCE,
                "method": METHOD, "minimum": MINIMUM,
                "reason": self.reason, "studies": self.studies,
                "populations": [p.as_dict() for p in self.populations], "notes": self.notes,
                "choices": self.choices,
                "calibration": self.calibration.as_dict() if self.calibration else None}

    def widest(self, question: str) -> Part | None:
        """The modality x direction part whose interval on this question is widest (no
        estimate counts as widest): where a follow-up study helps most."""
        best: tuple[float, int, Part] | None = None
        for population in self.populations[:1]:
            for part in population.parts:
                row = part.rows.get(question)
                if part.level != 2 or row is None or row.plan is None or row.plan.more == 0:
                    continue
                interval = row.ppi or row.readers
                # No estimate, or one without spread, is as uncertain as it gets.
                width = 2.0 if interval is None or interval.collapsed else interval.high - interval.low
                if best is None or (width, row.plan.more) > best[:2]:
                    best = (width, row.plan.more, part)
        return best[2] if best else None


@dataclass(frozen=True)
class SubsetEstimate:
    """A subset's quality, claimed only for its edits inside the sampled frame."""

    study: dict[str, Any]
    row: Row | None  # None when no edit of the subset lies in the frame
    inside: set[int]  # attempt ids of the subset inside the study's sampled frame
    outside: set[int]  # the rest: no study sampled them, so nothing is said of them


def subset_estimate(session: Session, attempt_ids: set[int], question: str = "overall",
                    target: float = DEFAULT_TARGET) -> SubsetEstimate | None:
    """The quality of a set of accepted edits (an export's subset), estimated as /quality
    estimates a part: from the newest study a quality estimate can start from, and only for
    the edits inside that study's sampled frame (a chest X-ray study says nothing of brain
    MRI edits). The set must not be chosen by the readers' answers, or the estimate is
    biased. None when no study can give one."""
    choices = eligible_studies(session)
    if not choices:
        return None
    root = default_study(session, choices)
    frame = _frame(session, root, data_fingerprint(session))
    study = {"id": root.id, "name": root.name, "design": root.design}
    if not len(frame):
        return SubsetEstimate(study, None, set(), set(attempt_ids))
    labels = labels_of(session, frame, family(session, root))
    chosen = np.isin(frame.attempt_ids, np.fromiter(attempt_ids, dtype=np.int64, count=len(attempt_ids)))
    # The frame holds every edit the studies could have drawn, read or not; weights of zero
    # mark the edits of strata no study sampled (a stale pool), which are outside too.
    sampled = labels.inclusion > 0
    index = np.flatnonzero(frame.accepted & chosen & sampled)
    inside = {int(a) for a in frame.attempt_ids[index]}
    columns = _columns(frame, labels, encoded(labels.strata)[1])[question]
    row = estimate(columns, index, question, target=target) if inside else None
    return SubsetEstimate(study, row, inside, set(attempt_ids) - inside)


def forget() -> None:
    """Drop every kept report and frame (benchmarks time the first view with this)."""
    _kept.clear()
    _frames.clear()
    _defaults.clear()


def warm(engine: Engine) -> None:
    """The report /quality opens on (the newest eligible study's), computed when the server
    starts, after the judged-edit pool: its first view is then kept, and a later one (after
    new answers) does not pay a process's one-time costs either. Logged, never raised."""
    try:
        with Session(engine) as session:
            quality_report(session, weighted=False)  # the page's
            quality_report(session)  # its skill-weighted line's, and the JSON's
        logger.info("the data set's quality report computed in advance")
    except Exception:
        logger.exception("the data set's quality report could not be computed in advance")


def checked_target(points: float | None) -> float:
    """The planner's half-width, given in percentage points."""
    if points is None:
        return DEFAULT_TARGET
    if not TARGETS[0] * 100 <= points <= TARGETS[1] * 100:
        raise Invalid(f"the target half-width is {TARGETS[0] * 100:g} to {TARGETS[1] * 100:g} "
                      f"points, not {points:g}", field="target")
    return points / 100


def target_of(text: str) -> float | None:
    """The target as typed in a URL, in points; None when it is not one (the page says so
    and uses the default)."""
    try:
        return checked_target(float(text) if text.strip() else None)
    except (ValueError, Invalid):
        return None


def eligible_studies(session: Session, every: list[Study] | None = None) -> list[Study]:
    """Studies a quality estimate can start from: validation or accepted-edits studies that
    are not follow-ups of another, newest first (of ``every`` study, when read already)."""
    found = []
    for study in every if every is not None else _every_study(session):
        raw = json.loads(study.selection)
        if Design(study.design).frames_the_data_set and not raw.get("follow_up_of"):
            found.append(study)
    return found


def default_study(session: Session, choices: list[Study]) -> Study:
    """The study an estimate starts from when none is named: a locked one before an open one
    (its reference is settled), then the one with the most first reads, then the newest. The
    newest alone was a 7-case follow-up with no estimate."""
    reads = dict(session.execute(
        select(col(Assignment.study_id), func.count(func.distinct(col(Answer.assignment_id))))
        .join(Answer, col(Answer.assignment_id) == Assignment.id)
        .where(col(Assignment.study_id).in_([s.id for s in choices]),
               col(Assignment.repeat_of).is_(None), col(Answer.retracted).is_(False))
        .group_by(col(Assignment.study_id))).all())
    return max(choices, key=lambda s: (s.status == StudyStatus.locked, reads.get(s.id, 0),
                                       s.id or 0))


def _every_study(session: Session) -> list[Study]:
    return list(session.scalars(select(Study).order_by(col(Study.id).desc())))


def quality_report(session: Session, study_id: int | None = None,
                   target: float = DEFAULT_TARGET, *, weighted: bool = True) -> QualityReport:
    """``weighted=False``: every figure but the skill-weighted sensitivity line, which is most
    of the time after a new read (the page fetches it apart: /quality/skill-weighted)."""
    every = _every_study(session)
    choices = eligible_studies(session, every)
    listed = [{"id": s.id, "name": s.name, "design": s.design} for s in choices]
    if study_id is None:
        if not choices:
            return QualityReport(None, target, reason=(
                "No study to start from: make a validation or accepted-edits study and have it "
                "read. The data set's quality is estimated from the readers' answers on a sample."))
        # The default rests on every eligible study's reads: one statement says whether any
        # changed, and the choice is kept until one does.
        framing = [s.id or 0 for s in every if Design(s.design).frames_the_data_set]  # follow-ups too
        # A locked study goes first, and locking changes no answer: the statuses are in it.
        state = (*data_fingerprint(session, *study_parts(framing)),
                 tuple((s.id, s.status) for s in choices))
        chosen = _defaults.get_or_make(state, lambda: default_study(session, choices).id or 0)
        root = next(s for s in choices if s.id == chosen)
    else:
        found = next((s for s in every if s.id == study_id), None)
        if found is None:
            raise NotFound(f"no study {study_id}")
        root = found
    study = {"id": root.id, "name": root.name, "design": root.design,
             "primary_question": root.primary_question,
             # chosen by default_study, as no study was named: the page says so
             "by_default": study_id is None}
    if not Design(root.design).frames_the_data_set:
        return QualityReport(study, target, choices=listed, reason=(
            "This study reads whole runs (preference data); the data set's quality is estimated "
            "from a validation or an accepted-edits study."))
    studies = family(session, root, every)
    if study_id is not None:
        state = data_fingerprint(session, *study_parts([s.id or 0 for s in studies]))
    data = data_of(state)  # the frame rests on the data set alone
    # Whether the study was named: the report says "chosen by default" when it was not.
    key = (state, tuple((s.id, s.status) for s in studies), target, weighted, study_id is None)
    return _kept.get_or_make(key, lambda: _compute(session, root, studies, target, study, listed,
                                                    data, weighted))


def _compute(session: Session, root: Study, studies: list[Study], target: float,
             study: dict[str, Any], listed: list[dict[str, Any]],
             data: tuple[object, ...], weighted: bool = True) -> QualityReport:
    frame = _frame(session, root, data)
    if not len(frame):
        return QualityReport(study, target, choices=listed, reason=(
            "The study's frame is empty now: no edit of the data set matches its filter."))
    labels = labels_of(session, frame, studies, weighted=weighted)
    report = QualityReport(study, target, studies=labels.studies, notes=labels.notes, choices=listed)
    if not np.any(~np.isnan(labels.consensus["overall"])):
        report.reason = ("No read edit has a consensus yet: the estimate needs the readers' "
                         "answers (a tie waits for the adjudicator).")
        return report
    keys = ["accepted"] if frame.design.accepted_only else ["accepted", "judged"]
    strata = encoded(labels.strata)[1]
    columns = _columns(frame, labels, strata)
    alternatives = {name: _columns(frame, labels, strata, values)
                    for name, values in labels.sensitivity.items()}
    report.calibration = calibration(session, frame, labels)
    # Facet values as integer codes, once per frame: a part is then an integer comparison.
    coded = {facet: frame.coded(facet) for facet in FACETS}
    for key in keys:
        mask = frame.accepted if key == "accepted" else np.ones(len(frame), dtype=bool)
        index = np.flatnonzero(mask)
        # The sensitivity lines read the judge's answers over the whole population as the
        # primary line does: taken from the frame once for all of them.
        taken: Taken = {}
        population = _population(coded, columns, key, index, target, taken)
        population.sensitivity = {name: estimates({q: alt[q] for q in ORDER}, index, target=target,
                                                  taken=taken)
                                  for name, alt in alternatives.items()}
        population.anytime = anytime_rate(labels.consensus["overall"], labels.inclusion,
                                          labels.drawn, frame.clusters, labels.answered, index)
        report.populations.append(population)
    return report


def _frame(session: Session, root: Study, data: tuple[object, ...]) -> Frame:
    """The root study's frame. It changes with the data only, not with the answers: kept
    apart, a new answer recomputes the figures without reading every judged edit again."""
    recorded = json.dumps(json.loads(root.selection).get("filter", {}), sort_keys=True)
    return _frames.get_or_make((data, root.design, recorded), lambda: frame_of(session, root))


def _columns(frame: Frame, labels: Labels, strata: np.ndarray,
             consensus: dict[str, np.ndarray] | None = None) -> dict[str, Columns]:
    """Each question's columns; the settled edits weighted within their stratum for the drawn
    edits the readers left open (app/quality/nonresponse.py). ``strata``: the labels' strata
    as codes."""
    weights = np.zeros(len(frame))
    eligible = labels.inclusion > 0
    weights[eligible] = 1 / labels.inclusion[eligible]
    clusters = frame.cluster_codes()
    values = consensus or labels.consensus
    drawn = labels.drawn if len(labels.drawn) else eligible & ~np.isnan(labels.consensus["overall"])
    return {q: Columns(frame.judge[q], values[q],
                       within_stratum(weights, drawn, ~np.isnan(values[q]), strata),
                       clusters, strata)
            for q in QUESTIONS}


def _population(coded: dict[str, tuple[np.ndarray, np.ndarray]], columns: dict[str, Columns],
                key: str, index: np.ndarray, target: float, taken: Taken) -> Population:
    in_order = {q: columns[q] for q in ORDER}
    parts = [Part({}, "all", 0, estimates(in_order, index, target=target, with_rogan_gladen=True,
                                          taken=taken))]
    for level in range(1, len(FACETS) + 1):
        facets = FACETS[:level]
        groups, which = grouped([(coded[f][0], coded[f][1][index]) for f in facets])
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(len(groups) + 1))
        for c, group in enumerate(groups):
            members = index[order[bounds[c]:bounds[c + 1]]]
            values = dict(zip(facets, group, strict=True))
            parts.append(Part(values, " · ".join(values.values()), level,
                              estimates(in_order, members, target=target, taken=taken)))
    return Population(key, POPULATIONS[key], len(index), _ordered(parts))


def _ordered(parts: list[Part]) -> list[Part]:
    """Each part followed by its own parts: modality, then its directions, then diseases."""
    def sort_key(p: Part) -> tuple[str, ...]:
        return tuple(p.part.get(f, "") for f in FACETS)
    return sorted(parts, key=sort_key)
