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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Integer, cast, func, select
from sqlalchemy import case as sql_case
from sqlmodel import Session, col

from app.agreement.dawid_skene import skill_weighted
from app.agreement.reads import StudyReads, load
from app.agreement.report import SENSITIVITY, first_reads, question_tables, settled_consensus
from app.cases.filters import CaseFilter, recorded_filter, where_clauses
from app.db import driver_rows
from app.models import JudgeVerdict, Task
from app.studies.judged_pool import ANSWERS, admitted, judged_pool
from app.studies.models import Design, Study, StudyItem, in_figures
from app.studies.pool import SEPARATOR
from pipeline.vocabulary import DIMENSIONS, QUESTIONS

JUDGE_COLUMNS = {"overall": JudgeVerdict.qualified} | {d: getattr(JudgeVerdict, d) for d in DIMENSIONS}
FACETS = ("modality", "direction", "disease")


@dataclass
class Frame:
    """Every edit of the frame, column by column (numpy), in attempt order."""

    design: Design
    attempt_ids: np.ndarray
    clusters: np.ndarray  # source image id per edit (int64)
    accepted: np.ndarray  # bool: the task's accepted edit
    facets: dict[str, np.ndarray]  # modality, direction, disease, outcome, verdict
    judge: dict[str, np.ndarray]  # question -> 1.0 / 0.0, nan where the judge gave no answer
    # What every report on the frame codes the same way, coded once: the frame is kept
    # between reports (a new answer recomputes the figures, not the frame).
    _derived: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.attempt_ids)

    def coded(self, facet: str) -> tuple[np.ndarray, np.ndarray]:
        """``encoded`` of one facet's values."""
        return self._kept(("facet", facet), lambda: encoded(self.facets[facet]))

    def cluster_codes(self) -> np.ndarray:
        """Each edit's source image as a code 0..k-1."""
        return self._kept(("clusters",), lambda: np.unique(self.clusters, return_inverse=True)[1])

    def stratum_codes(self, facets: tuple[str, ...]) -> tuple[dict[str, int], np.ndarray]:
        """The stratum key ("fail/add/chest_xray") of every edit, as a code, and the codes' keys."""
        def codes() -> tuple[dict[str, int], np.ndarray]:
            if not facets:
                return {"": 0}, np.zeros(len(self), dtype=np.int64)
            groups, which = grouped([self.coded(f) for f in facets])
            return {SEPARATOR.join(g): i for i, g in enumerate(groups)}, which
        return self._kept(("strata", *facets), codes)

    def _kept(self, key: tuple[str, ...], make: Callable[[], Any]) -> Any:
        # Two requests may both make it; either result is the same.
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]


def frame_of(session: Session, study: Study) -> Frame:
    raw = json.loads(study.selection)
    design = Design(study.design)
    if design.judged:
        return _judged_frame(session, design, recorded_filter(raw.get("filter", {})))
    dialect = session.get_bind().dialect.name
    where = where_clauses(recorded_filter(raw.get("filter", {})), dialect)
    # An accepted-edits study's frame: plain scans joined in numpy, read as driver tuples.
    tasks = driver_rows(session, select(
        col(Task.id), col(Task.source_image_id), col(Task.accepted_attempt_id),
        col(Task.modality), col(Task.direction), col(Task.disease),
        col(Task.outcome)).where(*where).order_by(col(Task.id)))
    if not tasks:
        return _empty(design)
    _task_ids, image, accepted_id, modality, direction, disease, outcome = (
        zip(*tasks, strict=True))
    accepted_of = np.asarray(accepted_id, dtype=float)  # nan: no accepted edit
    has = ~np.isnan(accepted_of)
    attempt_ids, task_at = accepted_of[has].astype(np.int64), np.flatnonzero(has)
    record = _verdicts_of_record(session, attempt_ids)
    order = np.argsort(attempt_ids, kind="stable")
    attempt_ids, task_at, record = attempt_ids[order], task_at[order], record[order]
    if not len(attempt_ids):
        return _empty(design)
    judge = {q: record[:, 1 + i] for i, q in enumerate(JUDGE_COLUMNS)}
    verdict = np.where(judge["overall"] == 1.0, "pass", "fail").astype(object)
    facets = {"modality": np.asarray(modality, dtype=object)[task_at],
              "direction": np.asarray(direction, dtype=object)[task_at],
              "disease": np.asarray(disease, dtype=object)[task_at],
              "outcome": np.asarray([o or "" for o in outcome], dtype=object)[task_at],
              "verdict": verdict}
    return Frame(design, attempt_ids, np.asarray(image, dtype=np.int64)[task_at],
                 accepted_of[task_at] == attempt_ids, facets, judge)


def _judged_frame(session: Session, design: Design, case_filter: CaseFilter) -> Frame:
    """A validation study's frame is the kept judged-edit pool (app/studies/judged_pool.py)
    under its filter: built when the server starts and kept per data version, so the first
    /quality view no longer reads every judged edit again (0.6 s on 88K tasks)."""
    pool = judged_pool(session)
    at = admitted(session, pool, case_filter)
    if not len(at):
        return _empty(design)
    answers = pool.answers[at]
    judge = {q: answers[:, ANSWERS.index(q)] for q in JUDGE_COLUMNS}
    facets = {facet: np.asarray(pool.labels[facet], dtype=object)[pool.codes[facet][at]]
              for facet in (*FACETS, "outcome")}
    facets["verdict"] = np.where(judge["overall"] == 1.0, "pass", "fail").astype(object)
    return Frame(design, pool.attempt_id[at], pool.image[at], pool.accepted[at],
                 facets, judge)


def _verdicts_of_record(session: Session, attempt_ids: np.ndarray) -> np.ndarray:
    """Per attempt, its verdict of record (the first stored): [error-free (1/0; nan when it
    has none), overall, dimensions...], nan where the judge gave no answer."""
    # The verdict's answers packed into one base-3 number (0 no, 1 yes, 2 none) plus 3^k when
    # it has no error: one column instead of seven cut the scan of 220K verdicts by a third.
    answers = list(JUDGE_COLUMNS.values())
    packed = sum((func.coalesce(cast(col(c), Integer), 2) * 3 ** k for k, c in enumerate(answers)),
                 sql_case((col(JudgeVerdict.error).is_(None), 3 ** len(answers)), else_=0))
    rows = driver_rows(session, select(col(JudgeVerdict.attempt_id), col(JudgeVerdict.id), packed))
    table = np.array(rows, dtype=np.int64).reshape(-1, 3)
    table = table[np.lexsort((table[:, 1], table[:, 0]))]
    firsts, at = np.unique(table[:, 0], return_index=True)
    record = np.full((len(attempt_ids), 1 + len(answers)), np.nan)
    if len(firsts):
        where = np.minimum(np.searchsorted(firsts, attempt_ids), len(firsts) - 1)
        found = firsts[where] == attempt_ids
        number = table[at[where[found]], 2]
        unpacked = np.empty((len(number), 1 + len(answers)))
        unpacked[:, 0] = number // 3 ** len(answers)
        for k in range(len(answers)):
            digit = (number // 3 ** k) % 3
            unpacked[:, 1 + k] = np.where(digit == 2, np.nan, digit)
        record[found] = unpacked
    return record


def _empty(design: Design) -> Frame:
    empty = np.array([], dtype=object)
    return Frame(design, np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                 np.array([], dtype=bool), {f: empty for f in (*FACETS, "outcome", "verdict")},
                 {q: np.array([]) for q in QUESTIONS})


def encoded(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, each value's index among them). pandas hashes; numpy's unique
    sorts Python strings one comparison at a time, a second per facet on a large frame."""
    codes, names = pd.factorize(values, sort=True)
    return np.asarray(names, dtype=object), codes.astype(np.int64)


def family(session: Session, root: Study, every: list[Study] | None = None) -> list[Study]:
    """The root study and the follow-ups made from it, oldest first (among ``every`` study,
    when read already)."""
    studies = [root]
    found = every if every is not None else session.scalars(select(Study))
    for study in sorted(found, key=lambda s: s.id or 0):
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


def grouped(coded: list[tuple[np.ndarray, np.ndarray]]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Edits grouped by a combination of encoded facets: (each group's values, each edit's
    group). One integer per combination (mixed radix), so grouping is a 1-D integer unique."""
    combined = np.zeros(len(coded[0][1]) if coded else 0, dtype=np.int64)
    for names, codes in coded:
        combined = combined * len(names) + codes
    numbers, which = np.unique(combined, return_inverse=True)
    groups = []
    for number in numbers.tolist():
        digits = []
        for names, _ in reversed(coded):
            number, digit = divmod(number, len(names))
            digits.append(str(names[digit]))
        groups.append(tuple(reversed(digits)))
    return groups, which.ravel()


def _positions(frame: Frame, attempt_ids: list[int]) -> np.ndarray:
    """Each attempt's place in the frame (sorted by attempt id), -1 when it is not there."""
    wanted = np.asarray(attempt_ids, dtype=np.int64)
    at = np.minimum(np.searchsorted(frame.attempt_ids, wanted), max(len(frame) - 1, 0))
    found = (frame.attempt_ids[at] == wanted) if len(frame) else np.zeros(len(wanted), dtype=bool)
    return np.where(found, at, -1)


@dataclass
class Labels:
    """Per edit of the frame: the readers' consensus per question (nan: none), the chance it
    was read, and the stratum it was drawn from (for the variance)."""

    consensus: dict[str, np.ndarray]
    inclusion: np.ndarray
    strata: np.ndarray
    studies: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Of the read edits only (frame position ->): the round, the frozen verdict the study
    # compared with, and the failure tags the readers chose (for the judge's calibration).
    rounds: dict[int, int] = field(default_factory=dict)
    verdicts: dict[int, int] = field(default_factory=dict)
    tags: dict[int, Counter[str]] = field(default_factory=dict)
    # Edits some study drew, settled by its readers or not (app/quality/nonresponse.py).
    drawn: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # The consensus when what the readers left open is counted one way or the other:
    # policy name -> question -> value per edit (the sensitivity lines).
    sensitivity: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    # When the last first read of each read edit came in (POSIX seconds; nan: unread): the
    # order in which the anytime-valid interval takes the source images (app/quality/anytime.py).
    answered: np.ndarray = field(default_factory=lambda: np.zeros(0))


SKILL_WEIGHTED = "skill_weighted"  # the Dawid-Skene reference (app/agreement/dawid_skene.py)


def _skill_weighted(data: StudyReads) -> dict[int, dict[str, bool]]:
    """Item -> question -> the skill-weighted reference, where the model settles one."""
    found: dict[int, dict[str, bool]] = {}
    for question in QUESTIONS:
        model = skill_weighted(data, question)
        for item_id, label in (model.labels if model else {}).items():
            found.setdefault(item_id, {})[question] = label
    return found


def _fill(target: dict[str, np.ndarray], settled: dict[int, dict[str, bool]],
          at_item: dict[int, int]) -> None:
    """Each question's settled value into the frame's positions not yet given one."""
    for question in QUESTIONS:
        pairs = [(at_item.get(item_id, -1), float(answers[question]))
                 for item_id, answers in settled.items() if question in answers]
        at = np.array([i for i, _ in pairs], dtype=np.int64)
        given = np.array([v for _, v in pairs], dtype=float)
        # The first study that settled an edit gives its consensus (and, should two of a
        # study's items be one edit, the first of them).
        first = np.unique(at, return_index=True)[1] if len(at) else at
        at, given = at[first], given[first]
        fresh = (at >= 0) & np.isnan(target[question][np.maximum(at, 0)])
        target[question][at[fresh]] = given[fresh]


def labels_of(session: Session, frame: Frame, studies: list[Study], *,
              weighted: bool = True) -> Labels:
    """``weighted``: with the skill-weighted reference's line (a Dawid-Skene fit per
    question, seconds for a 1,000-case study); the page asks for it apart, after itself."""
    consensus = {q: np.full(len(frame), np.nan) for q in QUESTIONS}
    sensitivity = {name: {q: np.full(len(frame), np.nan) for q in QUESTIONS}
                   for name in (*SENSITIVITY, *((SKILL_WEIGHTED,) if weighted else ()))}
    drawn_edits = np.zeros(len(frame), dtype=bool)
    answered = np.full(len(frame), np.nan)
    not_drawn = np.ones(len(frame))
    strata = np.full(len(frame), "", dtype=object)
    described, notes = [], []
    rounds: dict[int, int] = {}
    verdicts: dict[int, int] = {}
    tags: dict[int, Counter[str]] = {}
    root_id = studies[0].id if studies else None
    for study in studies:
        raw = json.loads(study.selection)
        facets = tuple(raw.get("strata_facets") or ())
        items = session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id), col(StudyItem.stratum))
                                .where(col(StudyItem.study_id) == study.id, in_figures())).all()
        key_codes, keys = frame.stratum_codes(facets)
        inside = _in_frame(frame, raw, root_id)
        position = _positions(frame, [attempt_id for _, attempt_id, _ in items])
        drawn_edits[position[position >= 0]] = True
        drawn: dict[str, int] = {}
        outside = 0
        for (_, _, stratum), at in zip(items, position, strict=True):
            if at >= 0:
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
            members = inside & (keys == key_codes.get(key, -1))
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
        at_item = {item_id: int(at) for (item_id, _, _), at in zip(items, position, strict=True)}
        for case in data.cases:
            i = at_item.get(case.item_id, -1)
            if i >= 0 and i not in rounds:
                rounds[i] = case.round
                if case.judge_verdict_id is not None:
                    verdicts[i] = case.judge_verdict_id
        for read in reads.values():
            i = at_item.get(read.item_id, -1)
            if i >= 0 and read.answered_at is not None:
                stamp = read.answered_at.timestamp()
                answered[i] = stamp if np.isnan(answered[i]) else max(answered[i], stamp)
            if i >= 0 and read.tags:
                tags.setdefault(i, Counter()).update(read.tags)
        tables = question_tables(data)
        for target, policy in [(consensus, None), *((sensitivity[name], policy)
                                                    for name, policy in SENSITIVITY.items())]:
            settled = (settled_consensus(data, policy, tables) if policy
                       else settled_consensus(data, tables=tables))
            _fill(target, settled, at_item)
        if weighted:
            _fill(sensitivity[SKILL_WEIGHTED], _skill_weighted(data), at_item)
        described.append({"id": study.id, "name": study.name, "design": study.design,
                          "cases": len(items), "readers": len(data.readers),
                          "follow_up_of": raw.get("follow_up_of"), "part": raw.get("part")})
    inclusion = 1 - not_drawn
    for values in (consensus, *sensitivity.values()):
        for question in QUESTIONS:  # an edit no study drew (a stale pool) cannot carry a weight
            values[question][inclusion <= 0] = np.nan
    return Labels(consensus, inclusion, strata, described, notes, rounds, verdicts, tags,
                  drawn_edits & (inclusion > 0), sensitivity, answered)
