"""A pairwise study's figures, from each read's answer in force (first reads only; a hidden
repeat is for the reader's own consistency), each with its n and a cluster-bootstrap
interval over source images (strengths.py)."""

import json
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlalchemy import func, select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from app.charts import Point, strength_chart
from app.designs.pairwise.strengths import (
    EQUAL,
    FIRST,
    NEITHER,
    SECOND,
    Figure,
    PairRead,
    StrengthFigures,
    later_preferred,
    left_preferred,
    readers_alpha,
    share_of,
    strength_figures,
)
from app.memo import Memo
from app.models import Attempt, JudgeVerdict, Run, RunOrigin, Task, User
from app.studies.models import Assignment, PairAnswer, Study, StudyItem, StudyPair


@dataclass(frozen=True)
class Read:
    item_id: int
    reader: str
    choice: str
    first_left: bool
    cluster: int
    kind: str
    first_round: int
    second_round: int
    first_run: int
    second_run: int
    # The judge's verdicts of record on the two edits, frozen when the study was made.
    first_passed: bool | None = None
    second_passed: bool | None = None
    confidence: int = 0
    tags: str = "[]"  # the reader's reasons, as stored (a JSON list)
    comment: str = ""

    @property
    def accepted_first(self) -> bool | None:
        """Of a pair where the judge passed exactly one edit: whether it is the first."""
        if self.first_passed is None or self.second_passed is None:
            return None
        return self.first_passed if self.first_passed != self.second_passed else None


KeyOf = Callable[["Read"], tuple[int, int]]


@dataclass(frozen=True)
class Strengths:
    """Strengths of the items one kind of label names (round 1, 2, ...; run 1, 2, ...)."""

    labels: list[str]
    figures: StrengthFigures

    @property
    def preferred(self) -> list[Figure | None]:
        """Each item's chance to be preferred to the first, ties aside: the logistic of its
        log-strength, and of its interval's limits (a monotone map keeps the interval's
        coverage)."""
        found: list[Figure | None] = [None]
        for f in self.figures.log_strength[1:]:
            if f.value is None:
                found.append(None)
                continue
            found.append(replace(f, value=_logistic(f.value),
                                 low=None if f.low is None else _logistic(f.low),
                                 high=None if f.high is None else _logistic(f.high)))
        return found


_plots: Memo[str] = Memo(16)


def strengths_plot(strengths: Strengths, what: str) -> str:
    """The strengths as a plot (SVG), each with its 95 % interval and n, the first item the
    reference at 0. Kept by the figures it draws, which the table beside it lists."""
    first = strengths.labels[0]
    points = tuple(Point(f"{label}{' (reference)' if i == 0 else ''}", "judge",
                         0.0 if i == 0 else f.value, None if i == 0 else f.low,
                         None if i == 0 else f.high, strengths.figures.n)
                   for i, (label, f) in enumerate(zip(strengths.labels, strengths.figures.log_strength,
                                                      strict=True)))
    title = (f"Strength of each {what.lower()} against {first} (95 % cluster bootstrap CI; "
             f"n = {strengths.figures.n} reads)")
    axis = f"preferred to {first}, log scale (0: as often; +1: about 73 % of the time)"
    return _plots.get_or_make((points, title, axis), lambda: strength_chart(points, title, axis))


def _logistic(x: float) -> float:
    return float(1.0 / (1.0 + math.exp(-x)))


@dataclass(frozen=True)
class PairwiseFigures:
    reads: int
    pairs: int
    images: int
    readers: list[str]
    kind: str
    choices: dict[str, int]
    by_round: Strengths | None  # pairs of rounds (consecutive, accepted against rejected)
    # Pairs of runs: the strength of each editor (how a run was made, and by which edit
    # model), from the reads of runs by two different editors.
    by_editor: Strengths | None
    later: Figure | None  # consecutive rounds or runs: the later one preferred
    # Consecutive rounds, step by step: round k -> the share preferring round k + 1.
    later_by_round: dict[int, Figure]
    left: Figure  # position bias: the left edit preferred
    readers_agree: Figure  # two readers of one pair gave the same answer
    readers_alpha: Figure  # Krippendorff's alpha of the readers' answers, chance corrected
    # Of the pairs where the judge passed exactly one edit: the readers prefer the one it
    # failed or find both unacceptable (premature acceptance), and the one it failed is at
    # least as good (wrongful rejection). None when no such pair was read.
    premature: Figure | None
    wrongful: Figure | None


def reads_of(session: Session, study: Study) -> list[Read]:
    """Each first read's answer in force (a retraction leaves the read unanswered)."""
    newest = (select(col(PairAnswer.assignment_id), func.max(PairAnswer.version).label("version"))
              .group_by(col(PairAnswer.assignment_id)).subquery())
    first_verdict = aliased(JudgeVerdict)
    second_verdict = aliased(JudgeVerdict)
    query = (select(col(StudyItem.id), col(User.name), col(PairAnswer.choice),
                    col(PairAnswer.first_left), col(Task.source_image_id), col(StudyPair.kind),
                    col(StudyPair.first_round), col(StudyPair.second_round),
                    col(StudyPair.first_run_id), col(StudyPair.second_run_id),
                    col(first_verdict.qualified), col(second_verdict.qualified),
                    col(PairAnswer.confidence), col(PairAnswer.tags), col(PairAnswer.comment))
             .join(newest, (newest.c.assignment_id == PairAnswer.assignment_id)
                   & (newest.c.version == PairAnswer.version))
             .join(Assignment, col(Assignment.id) == PairAnswer.assignment_id)
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(StudyPair, col(StudyPair.item_id) == StudyItem.id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .outerjoin(first_verdict, col(first_verdict.id) == StudyPair.first_verdict_id)
             .outerjoin(second_verdict, col(second_verdict.id) == StudyItem.judge_verdict_id)
             .where(col(Assignment.study_id) == study.id, col(Assignment.repeat_of).is_(None),
                    col(PairAnswer.retracted).is_(False))
             .order_by(col(StudyItem.id), col(User.name)))
    return [Read(*row) for row in session.execute(query)]


def strengths_plots(figures: PairwiseFigures) -> dict[str, str]:
    """The page's plots of the strengths there are, by the id of the table each stands beside."""
    return {name: strengths_plot(found, what) for name, found, what in
            (("by-round", figures.by_round, "Round"), ("by-editor", figures.by_editor, "Editor"))
            if found is not None}


def pairwise_figures(session: Session, study: Study, *, resamples: int = 2000) -> PairwiseFigures:
    """Kept until an answer of the study is added (every version is a new row): the
    strengths are refitted on each resample, which takes seconds on a large study."""
    stored = session.execute(
        select(func.count(), func.max(PairAnswer.id))
        .join(Assignment, col(Assignment.id) == PairAnswer.assignment_id)
        .where(col(Assignment.study_id) == study.id)).one()
    key = (session.get_bind().engine.url.render_as_string(hide_password=True), study.id,
           tuple(stored), resamples)
    return _kept.get_or_make(key, lambda: _figures(session, study, resamples))


_kept: Memo[PairwiseFigures] = Memo(8)


def _figures(session: Session, study: Study, resamples: int) -> PairwiseFigures:
    reads = reads_of(session, study)
    kinds = {r.kind for r in reads}
    kind = next(iter(kinds)) if len(kinds) == 1 else json.loads(study.selection or "{}").get(
        "pair_kind", "")
    choices = {c: sum(r.choice == c for r in reads) for c in (FIRST, SECOND, EQUAL, NEITHER)}
    return PairwiseFigures(
        reads=len(reads), pairs=len({r.item_id for r in reads}),
        images=len({r.cluster for r in reads}), readers=sorted({r.reader for r in reads}),
        kind=kind, choices=choices,
        # Pairs of runs hold each run's final round, whichever it is: rounds are not what
        # those pairs compare.
        by_round=(_strengths(reads, lambda r: (r.first_round, r.second_round), "round", resamples)
                  if kind != "runs" else None),
        by_editor=(_by_editor(reads, editors_of(session, {run for r in reads
                                                          for run in (r.first_run, r.second_run)}),
                              resamples) if kind == "runs" else None),
        later=later_preferred(_as_pair_reads(reads), resamples=resamples)
        if kind in ("consecutive", "runs") else None,
        later_by_round=({k: later_preferred(_as_pair_reads([r for r in reads if r.first_round == k]),
                                            resamples=resamples)
                         for k in sorted({r.first_round for r in reads})}
                        if kind == "consecutive" else {}),
        left=left_preferred(_as_pair_reads(reads), resamples=resamples),
        readers_agree=_agreement(reads, resamples),
        readers_alpha=readers_alpha(_units(reads), resamples=resamples),
        premature=_judged(reads, _premature, resamples),
        wrongful=_judged(reads, _wrongful, resamples))


def _as_pair_reads(reads: list[Read], items: dict[int, int] | None = None,
                   key: KeyOf | None = None) -> list[PairRead]:
    """The reads as the statistics take them: items numbered 0, 1, ... by ``key`` (the pair's
    rounds, say), or the pair's own two edits (0: the first, 1: the second)."""
    found = []
    for r in reads:
        first, second = key(r) if key is not None else (0, 1)
        if items is not None:
            first, second = items[first], items[second]
        found.append(PairRead(first, second, r.choice, r.first_left, r.cluster))
    return found


def editors_of(session: Session, ids: set[int]) -> dict[int, str]:
    """Run id -> its editor: "imported" for a run of the data set as imported, else
    "regenerated · " and the edit model its rounds' calls name (or "unknown model")."""
    origins: dict[int, str] = {}
    models: dict[int, str] = {}
    ordered = sorted(ids)
    # In chunks: a study of 20,000 pairs of runs names up to 40,000, past SQLite's limit on
    # a statement's parameters.
    for start in range(0, len(ordered), 5000):
        chunk = ordered[start:start + 5000]
        origins.update(session.execute(select(col(Run.id), col(Run.origin))
                                       .where(col(Run.id).in_(chunk))).all())
        for run_id, calls in session.execute(
                select(col(Attempt.run_id), col(Attempt.calls))
                .where(col(Attempt.run_id).in_(chunk), col(Attempt.calls).is_not(None))
                .order_by(col(Attempt.run_id), col(Attempt.round))):
            models.setdefault(run_id, _edit_model(calls))
    return {run: "imported" if origins.get(run) == RunOrigin.imported else
            f"regenerated · {models.get(run) or 'unknown model'}" for run in ids}


def _edit_model(calls: str) -> str:
    try:
        edit = json.loads(calls).get("edit") or {}
        return str(edit.get("model") or "")
    except (ValueError, AttributeError):
        return ""


def _strengths(reads: list[Read], key: KeyOf, label: str, resamples: int) -> Strengths | None:
    """Strengths of the rounds the pairs hold, numbered in order, the first 0."""
    values = sorted({v for r in reads for v in key(r)})
    if len(values) < 2:
        return None
    items = {v: i for i, v in enumerate(values)}
    return Strengths([f"{label} {v}" for v in values],
                     strength_figures(len(values), _as_pair_reads(reads, items, key),
                                      resamples=resamples, order=("earlier", "later")))


def _by_editor(reads: list[Read], editors: dict[int, str], resamples: int) -> Strengths | None:
    """Strengths of the editors, the data set's own ("imported") the reference when read; a
    read of two runs by one editor says nothing of editors and is left out."""
    between = [r for r in reads if editors[r.first_run] != editors[r.second_run]]
    names = sorted({editors[run] for r in between for run in (r.first_run, r.second_run)},
                   key=lambda name: (name != "imported", name))
    if len(names) < 2:
        return None
    items = {name: i for i, name in enumerate(names)}
    as_read = [PairRead(items[editors[r.first_run]], items[editors[r.second_run]], r.choice,
                        r.first_left, r.cluster) for r in between]
    return Strengths(names, strength_figures(len(names), as_read, resamples=resamples))


def _judged(reads: list[Read], counts: Callable[[Read, bool], tuple[float, float]],
            resamples: int) -> Figure | None:
    """A share over the reads of pairs where the judge passed exactly one edit."""
    split = [(r, r.accepted_first) for r in reads if r.accepted_first is not None]
    if not split:
        return None
    return share_of([r.cluster for r, _ in split], [counts(r, first) for r, first in split],
                    resamples=resamples)


def _premature(read: Read, accepted_first: bool) -> tuple[float, float]:
    """The edit the judge failed preferred, or both unacceptable; of every read."""
    failed = SECOND if accepted_first else FIRST
    return float(read.choice in (failed, NEITHER)), 1.0


def _wrongful(read: Read, accepted_first: bool) -> tuple[float, float]:
    """The edit the judge failed at least as good; of the reads that found one acceptable."""
    failed = SECOND if accepted_first else FIRST
    return float(read.choice in (failed, EQUAL)), float(read.choice != NEITHER)


def _units(reads: list[Read]) -> list[tuple[int, list[str]]]:
    """Each pair's source image and its readers' answers."""
    by_item: dict[int, list[Read]] = defaultdict(list)
    for r in reads:
        by_item[r.item_id].append(r)
    return [(answers[0].cluster, [a.choice for a in answers]) for answers in by_item.values()]


def _agreement(reads: list[Read], resamples: int) -> Figure:
    """Of the pairs two or more readers answered, the share of reader pairs that gave the
    same answer (all four answers told apart), over source images."""
    by_item: dict[int, list[Read]] = defaultdict(list)
    for r in reads:
        by_item[r.item_id].append(r)
    clusters, counts = [], []
    for answers in by_item.values():
        pairs = [(a, b) for i, a in enumerate(answers) for b in answers[i + 1:]]
        if pairs:
            clusters.append(answers[0].cluster)
            counts.append((float(sum(a.choice == b.choice for a, b in pairs)), float(len(pairs))))
    return share_of(clusters, counts, resamples=resamples)
