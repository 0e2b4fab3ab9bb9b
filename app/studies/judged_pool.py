"""The judged-edit pool kept between requests: every judged attempt of each task's latest run
whose verdict of record could be read, as narrow numpy columns, per version of the data.

The new-study form, study creation and an adaptive study's batches all read this pool. Built
from the wide attempt and verdict rows on every request, it took most of a 2.8 s form view on
88K tasks and raised the server's memory by 190 MiB each time (issue 28). Kept per data
version (app/cases/facets.py ``fingerprint``: the case browser's data version, which an
import and a pipeline run move, and the newest verdict, which a re-judgement moves), it is
read once; a filter is then one narrow query for the task ids it admits and a mask.

The columns are in attempt order, the order the pool has always had, so a study drawn from
them is the study drawn before (tests/studies/test_judged_pool.py).
"""

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, func, or_, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, where_clauses
from app.db import driver_rows, schema_revision
from app.fingerprints import fingerprint
from app.memo import Memo
from app.models import Attempt, JudgeVerdict, Run, Task
from pipeline.vocabulary import DIMENSIONS, Outcome

FACETS = ("direction", "modality", "disease", "outcome")
# The verdict of record's answers kept per attempt, in this order (for /quality's frame).
ANSWERS = ("overall", *DIMENSIONS)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgedPool:
    attempt_id: np.ndarray  # int64, ascending
    task_id: np.ndarray
    image: np.ndarray  # source image id
    passed: np.ndarray  # bool: the verdict of record qualified the edit
    round: np.ndarray
    score: np.ndarray  # the verdict's weighted score, nan when none
    codes: dict[str, np.ndarray]  # facet -> integer code per attempt
    labels: dict[str, tuple[str, ...]]  # facet -> the value of each code
    accepted: np.ndarray  # bool: the task's accepted edit
    answers: np.ndarray  # attempts x ANSWERS: 1.0 yes, 0.0 no, nan where the judge gave none
    marks: "_Marks | None" = None  # what the database held when this was read

    def __len__(self) -> int:
        return len(self.attempt_id)

    def value(self, facet: str, at: int) -> str:
        if facet == "verdict":
            return "pass" if self.passed[at] else "fail"
        return self.labels[facet][self.codes[facet][at]]


_kept: Memo[JudgedPool] = Memo(2)  # 220K attempts: about 12 MB each
# The newest pool of each database: a new version of the data is applied to it as a delta.
_newest: Memo[JudgedPool] = Memo(2)
_newest_lock = threading.Lock()
# Above this share of the pool's tasks changed (a large import), a fresh build is cheaper.
MAX_DELTA = 0.25
_IN_CHUNK = 5000  # task ids per IN list (SQLite binds at most 32,766 values)


@dataclass(frozen=True)
class _Marks:
    """Where the data stood when a pool was read: the newest run and verdict, how many of
    each there were, the runs still running, and the schema's revision (a migration may
    rewrite rows in place)."""

    revision: str | None
    run: int
    verdict: int
    runs: int
    verdicts: int
    running: tuple[int, ...]

    @classmethod
    def read(cls, session: Session, since: "_Marks | None" = None) -> tuple["_Marks", bool]:
        """The marks now; and whether every run and verdict added since ``since`` has an id
        above its maximum then. PostgreSQL hands ids out before a commit, so a transaction
        that commits later than one with a higher id (an import's block of ids beside a
        pipeline worker) adds rows below that maximum: the counts show it, and the pool is
        then built afresh. One statement, so that every figure is of one moment."""
        conn = session.connection()
        after_run = since.run if since else 0
        after_verdict = since.verdict if since else 0
        row = conn.execute(select(
            select(func.coalesce(func.max(Run.id), 0)).scalar_subquery(),
            select(func.count()).select_from(Run).scalar_subquery(),
            select(func.count()).select_from(Run).where(col(Run.id) > after_run).scalar_subquery(),
            select(func.coalesce(func.max(JudgeVerdict.id), 0)).scalar_subquery(),
            select(func.count()).select_from(JudgeVerdict).scalar_subquery(),
            select(func.count()).select_from(JudgeVerdict)
            .where(col(JudgeVerdict.id) > after_verdict).scalar_subquery())).one()
        run, runs, runs_after, verdict, verdicts, verdicts_after = (int(v or 0) for v in row)
        marks = cls(schema_revision(session),
                    run, verdict, runs, verdicts,
                    tuple(conn.scalars(select(col(Run.id)).where(col(Run.outcome) == Outcome.running))))
        in_order = since is not None and (runs - runs_after == since.runs
                                          and verdicts - verdicts_after == since.verdicts)
        return marks, in_order


def judged_pool(session: Session) -> JudgedPool:
    """The whole pool, per version of the data: a new version is the newest pool with the
    tasks that changed read again (a regeneration job moves the version with every task it
    finishes; building the whole pool each time took a second on 88K tasks), or a fresh
    build when there is no newest pool or too much changed."""
    url = session.get_bind().engine.url.render_as_string(hide_password=True)

    def make() -> JudgedPool:
        with _newest_lock:  # one update at a time per process, each from the newest pool
            base = _newest.get(url)
            found = (_updated(session, base) if base is not None else None) or _build(session)
            _newest.put(url, found)
            return found

    return _kept.get_or_make(fingerprint(session), make)


def warm(engine: Engine) -> None:
    """Build the pool in the background when the app starts, so the first new-study form
    does not wait for it (logged, never raised: the form builds it itself if this failed)."""
    try:
        with Session(engine) as session:
            found = judged_pool(session)
        logger.info("judged-edit pool kept: %d edits", len(found))
    except Exception:
        logger.exception("the judged-edit pool could not be built in advance")


def forget() -> None:
    """Drop the kept pools (benchmarks time a first view with this)."""
    _kept.clear()
    _newest.clear()


def judged_attempts(*columns: Any) -> Select[Any]:
    """Every judged attempt of each task's latest run whose verdict of record could be read,
    in attempt order: the pool of validation and adaptive studies. A correlated min(id) per
    attempt is one lookup in the attempt_id index whatever plan SQLite picks; a join to the
    grouped verdicts of record was re-grouped per row once a filter narrowed the tasks."""
    first = (select(func.min(JudgeVerdict.id)).where(col(JudgeVerdict.attempt_id) == Attempt.id)
             .correlate(Attempt).scalar_subquery())
    return (select(*columns).select_from(Task)
            .join(Attempt, col(Attempt.run_id) == Task.latest_run_id)
            .join(JudgeVerdict, col(JudgeVerdict.id) == first)
            .where(col(Attempt.image_present).is_(True), col(JudgeVerdict.error).is_(None),
                   col(JudgeVerdict.qualified).is_not(None))
            .order_by(col(Attempt.id)))


_COLUMNS = (col(Attempt.id), col(Task.id), col(Task.source_image_id), col(JudgeVerdict.qualified),
            col(Attempt.round), col(JudgeVerdict.weighted_score), col(Task.direction),
            col(Task.modality), col(Task.disease), col(Task.outcome), col(Task.accepted_attempt_id),
            *(col(getattr(JudgeVerdict, d)) for d in DIMENSIONS))


@dataclass(frozen=True)
class _Raw:
    """Pool columns before the facets are coded; facet values as object arrays."""

    attempt_id: np.ndarray
    task_id: np.ndarray
    image: np.ndarray
    passed: np.ndarray
    round: np.ndarray
    score: np.ndarray
    facets: dict[str, np.ndarray]
    accepted: np.ndarray
    answers: np.ndarray


def _read(session: Session, tasks: Sequence[int] | None = None) -> _Raw:
    """The judged attempts (of ``tasks`` only, if given) as columns, in attempt order.
    Read as driver tuples, not ORM rows: 220K of them."""
    rows: list[tuple[Any, ...]] = []
    if tasks is None:
        rows = driver_rows(session, judged_attempts(*_COLUMNS))
    else:
        for start in range(0, len(tasks), _IN_CHUNK):
            rows += driver_rows(session, judged_attempts(*_COLUMNS).where(
                col(Task.id).in_(tasks[start:start + _IN_CHUNK])))
        rows.sort(key=lambda row: row[0])
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return _Raw(empty, empty, empty, np.zeros(0, dtype=bool), empty, np.zeros(0),
                    {f: np.zeros(0, dtype=object) for f in FACETS}, np.zeros(0, dtype=bool),
                    np.zeros((0, len(ANSWERS))))
    columns = list(zip(*rows, strict=True))
    attempt_id = np.asarray(columns[0], dtype=np.int64)
    accepted_id = np.asarray([-1 if a is None else a for a in columns[10]], dtype=np.int64)
    return _Raw(
        attempt_id=attempt_id,
        task_id=np.asarray(columns[1], dtype=np.int64),
        image=np.asarray(columns[2], dtype=np.int64),
        passed=np.asarray(columns[3], dtype=bool),
        round=np.asarray(columns[4], dtype=np.int64),
        score=np.asarray([np.nan if s is None else s for s in columns[5]], dtype=float),
        facets={f: np.asarray(["" if v is None else str(v) for v in values], dtype=object)
                for f, values in zip(FACETS, columns[6:10], strict=True)},
        accepted=accepted_id == attempt_id,
        answers=np.asarray([columns[3], *columns[11:]], dtype=float).T.reshape(-1, len(ANSWERS)))


def _coded(raw: _Raw, marks: "_Marks | None") -> JudgedPool:
    codes, labels = {}, {}
    for facet in FACETS:
        # By hashing (pandas), not by sorting 220K strings: a third of the build otherwise.
        # In attempt order, so that a pool updated in place codes as a fresh one would.
        code, found = pd.factorize(raw.facets[facet])
        codes[facet], labels[facet] = code.astype(np.int64), tuple(str(v) for v in found)
    return JudgedPool(raw.attempt_id, raw.task_id, raw.image, raw.passed, raw.round, raw.score,
                      codes, labels, raw.accepted, raw.answers, marks)


def _build(session: Session) -> JudgedPool:
    marks, _ = _Marks.read(session)  # first: a change made during the read is seen next time
    return _coded(_read(session), marks)


def _raw_of(pool: JudgedPool) -> _Raw:
    return _Raw(pool.attempt_id, pool.task_id, pool.image, pool.passed, pool.round, pool.score,
                {f: np.asarray(pool.labels[f], dtype=object)[pool.codes[f]] if len(pool)
                 else np.zeros(0, dtype=object) for f in FACETS},
                pool.accepted, pool.answers)


def _updated(session: Session, pool: JudgedPool) -> JudgedPool | None:
    """``pool`` with the tasks that changed since it was read read again; None when a fresh
    build is due (another schema revision, rows added below the ids seen then, or too much
    changed to be worth a delta)."""
    before = pool.marks
    if before is None:
        return None
    marks, in_order = _Marks.read(session, before)
    if not in_order or marks.revision != before.revision:
        return None
    changed = _changed_tasks(session, before)
    if len(changed) > MAX_DELTA * max(len(np.unique(pool.task_id)), 1):
        return None
    fresh = _read(session, changed)
    old = _raw_of(pool)
    keep = ~np.isin(old.task_id, np.asarray(changed, dtype=np.int64))
    order = np.argsort(np.concatenate([old.attempt_id[keep], fresh.attempt_id]), kind="stable")

    def merged(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([a[keep], b])[order]

    raw = _Raw(merged(old.attempt_id, fresh.attempt_id), merged(old.task_id, fresh.task_id),
               merged(old.image, fresh.image), merged(old.passed, fresh.passed),
               merged(old.round, fresh.round), merged(old.score, fresh.score),
               {f: merged(old.facets[f], fresh.facets[f]) for f in FACETS},
               merged(old.accepted, fresh.accepted), merged(old.answers, fresh.answers))
    logger.info("judged-edit pool updated in place: %d tasks read again", len(changed))
    return _coded(raw, marks)


def _changed_tasks(session: Session, before: "_Marks") -> list[int]:
    """Every task whose pool entries may differ since ``before``: a new run (an import, a
    regeneration), a run that was still running (it ends by moving its task's latest run),
    and a new verdict (a re-judgement may give an unjudged attempt its verdict of record).
    A verdict is never changed in place, and the first of an attempt stays its record."""
    newer = col(Run.id) > before.run
    runs = select(col(Run.task_id)).where(
        or_(newer, col(Run.id).in_(before.running)) if before.running else newer)
    verdicts = (select(col(Run.task_id)).join(Attempt, col(Attempt.run_id) == Run.id)
                .join(JudgeVerdict, col(JudgeVerdict.attempt_id) == Attempt.id)
                .where(col(JudgeVerdict.id) > before.verdict))
    found = {t for (t,) in driver_rows(session, runs)} | {t for (t,) in driver_rows(session, verdicts)}
    return sorted(found)


def admitted(session: Session, pool: JudgedPool, case_filter: CaseFilter) -> np.ndarray:
    """Positions in the pool of the attempts whose task the filter admits."""
    where = where_clauses(case_filter, session.get_bind().dialect.name)
    if not where:
        return np.arange(len(pool))
    tasks = np.asarray([t for (t,) in driver_rows(session, select(col(Task.id)).where(*where))],
                       dtype=np.int64)
    return np.flatnonzero(np.isin(pool.task_id, tasks))


def stratum_keys(pool: JudgedPool, at: np.ndarray, facets: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The stratum key ("pass/add/chest_xray") of each attempt at ``at``, as (keys, code per
    attempt): grouped on integer codes, the key strings made once per stratum."""
    if not facets:
        return [""], np.zeros(len(at), dtype=np.int64)
    # One integer per combination (mixed radix over the facets' codes): a 1-D unique is an
    # order of magnitude faster than a unique over rows.
    sizes = [2 if f == "verdict" else max(1, len(pool.labels[f])) for f in facets]
    combined = np.zeros(len(at), dtype=np.int64)
    for facet, size in zip(facets, sizes, strict=True):
        column = pool.passed[at].astype(np.int64) if facet == "verdict" else pool.codes[facet][at]
        combined = combined * size + column
    unique, inverse = np.unique(combined, return_inverse=True)
    keys = []
    for value in unique:
        parts = []
        for facet, size in zip(reversed(facets), reversed(sizes), strict=True):
            value, code = divmod(int(value), size)
            parts.append(("pass" if code else "fail") if facet == "verdict"
                         else pool.labels[facet][code])
        keys.append("/".join(reversed(parts)))
    return keys, inverse.reshape(-1)


def values_of(pool: JudgedPool, at: int, facets: Sequence[str]) -> dict[str, Any]:
    return {f: pool.value(f, at) for f in facets}
