"""What a quality estimate rests on: every edit of the study's frame with the judge's answers,
and the readers' consensus on the edits a study read, with each one's inclusion probability.

The frame is the root study's: its design's pool (every judged round of each task's latest
run for a validation study, each task's accepted edit for an accepted-edits study) under its
filter, exactly as the study sampled it. Follow-up studies (``follow_up_of`` in their recorded
selection) sample a part of the same frame. Each study is an independent stratified sample,
so an edit's chance of being read at all is 1 - prod(1 - n_h / N_h) over the studies whose
frame holds it (the stratum counts and pool sizes recorded when each study was made).
"""

import json
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.agreement.reads import load
from app.agreement.report import first_reads, question_data
from app.cases.filters import CaseFilter, where_clauses
from app.models import Attempt, JudgeVerdict, Task
from app.studies.models import Design, Study, StudyItem
from app.studies.pool import SEPARATOR
from pipeline.vocabulary import DIMENSIONS, QUESTIONS

JUDGE_COLUMNS = {"overall": JudgeVerdict.qualified} | {d: getattr(JudgeVerdict, d) for d in DIMENSIONS}
FACETS = ("modality", "direction", "disease")


def recorded_filter(raw: dict[str, Any]) -> CaseFilter:
    """The CaseFilter a study recorded (lists back to tuples; unknown keys ignored)."""
    known = {f.name for f in fields(CaseFilter)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in raw.items() if k in known}
    return CaseFilter(**values)


@dataclass
class Frame:
    """Every edit of the frame, column by column (numpy), in attempt order."""

    design: Design
    attempt_ids: np.ndarray
    clusters: np.ndarray  # source image per edit
    accepted: np.ndarray  # bool: the task's accepted edit
    facets: dict[str, np.ndarray]  # modality, direction, disease, outcome, verdict
    judge: dict[str, np.ndarray]  # question -> 1.0 / 0.0, nan where the judge gave no answer

    def __len__(self) -> int:
        return len(self.attempt_ids)


def frame_of(session: Session, study: Study) -> Frame:
    raw = json.loads(study.selection)
    design = Design(study.design)
    case_filter = recorded_filter(raw.get("filter", {}))
    first = (select(func.min(JudgeVerdict.id)).where(col(JudgeVerdict.attempt_id) == Attempt.id)
             .correlate(Attempt).scalar_subquery())
    columns = [col(Attempt.id), col(Task.source_image_id), col(Task.accepted_attempt_id),
               col(Task.modality), col(Task.direction), col(Task.disease), col(Task.outcome),
               *(col(c) for c in JUDGE_COLUMNS.values())]
    if design is Design.validation:
        # The validation pool (app/studies/pool.py): judged rounds of the latest run whose
        # verdict of record could be read.
        query = (select(*columns).join(Attempt, col(Attempt.run_id) == Task.latest_run_id)
                 .join(JudgeVerdict, col(JudgeVerdict.id) == first)
                 .where(col(Attempt.image_present).is_(True), col(JudgeVerdict.error).is_(None),
                        col(JudgeVerdict.qualified).is_not(None)))
    else:
        query = (select(*columns).join(Attempt, col(Attempt.id) == Task.accepted_attempt_id)
                 .outerjoin(JudgeVerdict, col(JudgeVerdict.id) == first))
    dialect = session.get_bind().dialect.name
    query = query.where(*where_clauses(case_filter, dialect)).order_by(col(Attempt.id))
    rows = session.execute(query).all()
    if not rows:
        empty = np.array([], dtype=object)
        return Frame(design, np.array([], dtype=np.int64), empty, np.array([], dtype=bool),
                     {f: empty for f in (*FACETS, "outcome", "verdict")},
                     {q: np.array([]) for q in QUESTIONS})
    table = list(zip(*rows, strict=True))
    attempt_ids = np.asarray(table[0], dtype=np.int64)
    judge = {q: np.array([np.nan if v is None else float(v) for v in table[7 + i]])
             for i, q in enumerate(JUDGE_COLUMNS)}
    verdict = np.where(judge["overall"] == 1.0, "pass", "fail").astype(object)
    facets = {"modality": np.asarray(table[3], dtype=object),
              "direction": np.asarray(table[4], dtype=object),
              "disease": np.asarray(table[5], dtype=object),
              "outcome": np.asarray([o or "" for o in table[6]], dtype=object), "verdict": verdict}
    return Frame(design, attempt_ids, np.asarray(table[1], dtype=object),
                 attempt_ids == np.asarray([a if a is not None else -1 for a in table[2]]),
                 facets, judge)


def family(session: Session, root: Study) -> list[Study]:
    """The root study and the follow-ups made from it, oldest first."""
    studies = [root]
    for study in session.scalars(select(Study).order_by(col(Study.id))):
        raw = json.loads(study.selection)
        if raw.get("follow_up_of") == root.id:
            studies.append(study)
    return studies


def _in_frame(frame: Frame, raw: dict[str, Any], root_id: int | None) -> np.ndarray:
    """Which edits of the root's frame a study's frame holds: all of them for the root, the
    recorded part of it for a follow-up."""
    inside = np.ones(len(frame), dtype=bool)
    if raw.get("follow_up_of") == root_id:
        for facet, value in (raw.get("part") or {}).items():
            inside &= frame.facets[facet] == value
    return inside


def _stratum_keys(frame: Frame, facets: tuple[str, ...]) -> np.ndarray:
    if not facets:
        return np.full(len(frame), "", dtype=object)
    keys = frame.facets[facets[0]].astype(str)
    for facet in facets[1:]:
        keys = np.char.add(np.char.add(keys, SEPARATOR), frame.facets[facet].astype(str))
    return keys.astype(object)


@dataclass
class Labels:
    """Per edit of the frame: the readers' consensus per question (nan: none), the chance it
    was read, and the stratum it was drawn from (for the variance)."""

    consensus: dict[str, np.ndarray]
    inclusion: np.ndarray
    strata: np.ndarray
    studies: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def labels_of(session: Session, frame: Frame, studies: list[Study]) -> Labels:
    position = {int(a): i for i, a in enumerate(frame.attempt_ids)}
    consensus = {q: np.full(len(frame), np.nan) for q in QUESTIONS}
    not_drawn = np.ones(len(frame))
    strata = np.full(len(frame), "", dtype=object)
    described, notes = [], []
    root_id = studies[0].id if studies else None
    for study in studies:
        raw = json.loads(study.selection)
        facets = tuple(raw.get("strata_facets") or ())
        items = session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id), col(StudyItem.stratum))
                                .where(col(StudyItem.study_id) == study.id)).all()
        keys = _stratum_keys(frame, facets)
        inside = _in_frame(frame, raw, root_id)
        drawn: dict[str, int] = {}
        outside = 0
        for _, attempt_id, stratum in items:
            if attempt_id in position:
                drawn[stratum] = drawn.get(stratum, 0) + 1
            else:
                outside += 1
        pool = raw.get("pool") or ({"": raw.get("total")} if not facets else {})
        for key, count in drawn.items():
            size = pool.get(key)
            if not size:
                notes.append(f"{study.name}: no pool size recorded for stratum {key or 'all'}; "
                             "its edits are left out")
                continue
            members = inside & (keys == key)
            not_drawn[members] *= 1 - min(1.0, count / size)
            if study is studies[0]:
                strata[members] = key
            now = int(members.sum())
            if now != size:
                notes.append(f"{study.name}: stratum {key or 'all'} held {size} edits when the "
                             f"study was made and holds {now} now; the recorded size is used")
        if outside:
            notes.append(f"{study.name}: {outside} of its edits are no longer in the frame "
                         "(their task was regenerated since) and are left out")
        data = load(session, study)
        reads = first_reads(data.reads)
        attempt_of = {item_id: attempt_id for item_id, attempt_id, _ in items}
        for question in QUESTIONS:
            table = question_data(data.cases, data.readers, reads, data.decisions, question)
            for case, (value, decided) in zip(data.cases, table.reference(), strict=True):
                i = position.get(attempt_of.get(case.item_id, -1))
                # The first study that settled an edit gives its consensus.
                settled = decided.resolved and value is not None
                if i is not None and settled and np.isnan(consensus[question][i]):
                    consensus[question][i] = float(bool(value))
        described.append({"id": study.id, "name": study.name, "design": study.design,
                          "cases": len(items), "readers": len(data.readers),
                          "follow_up_of": raw.get("follow_up_of"), "part": raw.get("part")})
    inclusion = 1 - not_drawn
    for question in QUESTIONS:  # an edit no study drew (a stale pool) cannot carry a weight
        consensus[question][inclusion <= 0] = np.nan
    return Labels(consensus, inclusion, strata, described, notes)
