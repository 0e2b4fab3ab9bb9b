"""The pairs a pairwise study can read. Both edits of a pair are of one task, so of one source
image, and both images are present:

- consecutive: round k against round k + 1 of one run, where the refinement loop should have
  made the edit better;
- accepted: a run's accepted edit against each of its rejected rounds, where the judge chose;
- runs: the final edits of one task's runs, each against the next (before and after a
  regeneration, or two edit models).

A pair whose two edits are one image (the same decoded pixels: a refinement that changed
nothing) asks a question with no answer, so it is left out of every pool and counted, as a
pair whose original is missing is.

Each pair is stratified by modality, direction and the judge's verdicts of record on its two
edits: both passed, one passed, or neither (an edit never judged counts as not passed).
"""

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, where_clauses
from app.db import driver_rows, paused_collection
from app.models import Attempt, AttemptMetric, JudgeVerdict, Run, SourceImage, Task


class PairKind(StrEnum):
    consecutive = "consecutive"
    accepted = "accepted"
    runs = "runs"


@dataclass(frozen=True)
class Edit:
    attempt_id: int
    run_id: int
    round: int
    passed: bool  # the judge's verdict of record; False when never judged or unreadable


@dataclass(frozen=True)
class Pair:
    """Two edits of one task: ``first`` is the earlier round, the accepted edit, or the
    earlier run's; ``second`` the other. Which is shown left is drawn per read, never this."""

    kind: PairKind
    task_id: int
    source_image_id: int
    first: Edit
    second: Edit
    modality: str
    direction: str

    @property
    def verdicts(self) -> str:
        passed = self.first.passed + self.second.passed
        return {2: "both passed", 1: "one passed", 0: "neither passed"}[passed]

    def value(self, facet: str) -> str:
        return {"modality": self.modality, "direction": self.direction,
                "verdicts": self.verdicts}[facet]


def pairs(session: Session, kind: PairKind, case_filter: CaseFilter = CaseFilter()) -> list[Pair]:
    """Every pair of this kind among the tasks the filter admits, in task order."""
    pool = pair_pool(session, kind, case_filter)
    return [pool.pair(i) for i in range(len(pool))]


@dataclass(frozen=True)
class EditTable:
    """The present edits of the filtered tasks, a row each, in task order, then each task's
    runs in the order they were made, then rounds: columns, so that a pool of 100,000s of
    pairs is found and counted without an object per pair."""

    task: np.ndarray
    image: np.ndarray
    modality: np.ndarray  # str objects
    direction: np.ndarray
    run: np.ndarray
    attempt: np.ndarray
    round: np.ndarray
    passed: np.ndarray  # the verdict of record; False when never judged or unreadable
    accepted: np.ndarray  # whether it is the round its run accepted
    # Whether the task's original is on disk (as the import found it): a pair without it
    # cannot be shown, and is left out of the pool and counted.
    original: np.ndarray
    # The digest of each edit's decoded pixels, None until the metrics worker has read it.
    pixels: np.ndarray

    @cached_property
    def codes(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The modality and direction of every edit as integer codes and the names they
        stand for, found once per table: each choice of strata then counts in integers,
        not by hashing 100,000s of strings again."""
        return {name: pd.factorize(getattr(self, name)) for name in ("modality", "direction")}

    def edit(self, at: int) -> Edit:
        return Edit(int(self.attempt[at]), int(self.run[at]), int(self.round[at]),
                    bool(self.passed[at]))


@dataclass(frozen=True)
class PairPool:
    """The pairs of one kind: rows of the edit table, a pair per position."""

    kind: PairKind
    edits: EditTable
    first: np.ndarray
    second: np.ndarray
    missing: int = 0  # pairs left out: their original image is missing
    identical: int = 0  # pairs left out: their two edits are one image
    unchecked: int = 0  # pairs kept whose edits' pixels are not yet digested

    @classmethod
    def of(cls, edits: EditTable, kind: PairKind) -> "PairPool":
        first, second = pair_positions(edits, kind)
        if not len(first):
            return cls(kind, edits, first, second)
        shown = edits.original[first]
        a, b = edits.pixels[first], edits.pixels[second]
        known = pd.notna(a) & pd.notna(b)
        same = known & (a == b)
        kept = shown & ~same
        return cls(kind, edits, first[kept], second[kept], int((~shown).sum()),
                   int((shown & same).sum()), int((kept & ~known).sum()))

    def __len__(self) -> int:
        return len(self.first)

    def pair(self, at: int) -> Pair:
        first, second, edits = int(self.first[at]), int(self.second[at]), self.edits
        return Pair(self.kind, int(edits.task[first]), int(edits.image[first]), edits.edit(first),
                    edits.edit(second), str(edits.modality[first]), str(edits.direction[first]))

    def by_stratum(self, facets: tuple[str, ...]) -> dict[str, np.ndarray]:
        """Stratum key ("chest_xray/add/one passed") -> the positions of its pairs, in order."""
        if not len(self):
            return {}
        if not facets:
            return {"": np.arange(len(self))}
        passed = self.edits.passed[self.first].astype(np.int64) + self.edits.passed[self.second]
        codes = self.edits.codes
        columns = {"modality": (codes["modality"][0][self.first], codes["modality"][1]),
                   "direction": (codes["direction"][0][self.first], codes["direction"][1]),
                   "verdicts": (passed, VERDICTS)}
        code = np.zeros(len(self), dtype=np.int64)
        names = []
        for facet in facets:
            inverse, values = columns[facet]
            code = code * len(values) + inverse
            names.append(values)
        found, inverse = np.unique(code, return_inverse=True)
        keys = []
        for value in found:
            parts = []
            for values in reversed(names):
                value, at = divmod(int(value), len(values))
                parts.append(str(values[at]))
            keys.append("/".join(reversed(parts)))
        order = np.argsort(inverse, kind="stable")  # each stratum's pairs stay in pair order
        split = np.split(order, np.cumsum(np.bincount(inverse, minlength=len(found)))[:-1])
        return dict(zip(keys, split, strict=True))


VERDICTS = np.array(["neither passed", "one passed", "both passed"], dtype=object)


def pair_pool(session: Session, kind: PairKind, case_filter: CaseFilter) -> PairPool:
    return PairPool.of(edit_table(session, case_filter), kind)


def edit_table(session: Session, case_filter: CaseFilter) -> EditTable:
    with paused_collection():  # 100,000s of tuples made and dropped, none in a cycle
        return _edit_table(session, case_filter)


def _edit_table(session: Session, case_filter: CaseFilter) -> EditTable:
    query = (select(col(Task.id), col(Task.source_image_id), col(Task.modality), col(Task.direction),
                    col(Run.id), col(Run.success_round), col(Attempt.id), col(Attempt.round),
                    col(SourceImage.present), col(AttemptMetric.pixels_sha256))
             .select_from(Task).join(Run, col(Run.task_id) == Task.id)
             .join(Attempt, col(Attempt.run_id) == Run.id)
             .outerjoin(SourceImage, col(SourceImage.id) == Task.source_image_id)
             .outerjoin(AttemptMetric, col(AttemptMetric.attempt_id) == Attempt.id)
             .where(col(Attempt.image_present).is_(True),
                    *where_clauses(case_filter, session.get_bind().dialect.name))
             .order_by(col(Task.id), col(Run.created_at), col(Run.id), col(Attempt.round)))
    rows = driver_rows(session, query)
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in range(10)]
    task, image, modality, direction, run, success, attempt, round_, present, pixels = columns
    attempts = np.array(attempt, dtype=np.int64)
    rounds = np.array(round_, dtype=np.int64)
    return EditTable(
        task=np.array(task, dtype=np.int64), image=np.array(image, dtype=np.int64),
        modality=np.array(modality, dtype=object), direction=np.array(direction, dtype=object),
        run=np.array(run, dtype=np.int64), attempt=attempts, round=rounds,
        passed=_passed(session, attempts),
        accepted=rounds == np.array([-1 if s is None else s for s in success], dtype=np.int64),
        original=np.array([bool(p) for p in present], dtype=bool),
        pixels=np.array(pixels, dtype=object))


def _passed(session: Session, attempts: np.ndarray) -> np.ndarray:
    """Each attempt's verdict of record (its first verdict), from one pass over the verdicts
    rather than a subquery per attempt."""
    verdicts = driver_rows(session, select(col(JudgeVerdict.attempt_id), col(JudgeVerdict.qualified))
                           .order_by(col(JudgeVerdict.id)))
    if not verdicts or not len(attempts):
        return np.zeros(len(attempts), dtype=bool)
    ids_of, qualified_of = zip(*verdicts, strict=True)
    ids = np.asarray(ids_of, dtype=np.int64)
    qualified = np.asarray(qualified_of, dtype=bool)
    ids, first = np.unique(ids, return_index=True)  # the index of each id's earliest verdict
    at = np.clip(np.searchsorted(ids, attempts), 0, len(ids) - 1)
    return (ids[at] == attempts) & qualified[first[at]]


def pair_positions(table: EditTable, kind: PairKind) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each pair's first and second edit, in task order (within a task, in the
    order its runs were made and, within a run, by the second edit's round)."""
    n = len(table.run)
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, table.run[1:] != table.run[:-1]])  # each run's first row
    run_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    if kind is PairKind.consecutive:
        later = np.flatnonzero((table.run[1:] == table.run[:-1])
                               & (table.round[1:] == table.round[:-1] + 1)) + 1
        return later - 1, later
    # Each run's accepted row (the last, should its round be there twice), or -1.
    accepted = np.full(len(starts), -1, dtype=np.int64)
    rows = np.flatnonzero(table.accepted)
    accepted[run_of[rows]] = rows
    if kind is PairKind.accepted:
        others = np.flatnonzero((accepted[run_of] >= 0) & (np.arange(n) != accepted[run_of]))
        return accepted[run_of[others]], others
    # Runs: each run's final edit (its accepted one, or else its last round) against the
    # final edit of the task's next run.
    finals = np.where(accepted >= 0, accepted, np.r_[starts[1:], n] - 1)
    same_task = np.flatnonzero(table.task[finals[1:]] == table.task[finals[:-1]])
    return finals[same_task], finals[same_task + 1]
