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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.cases.facets import fingerprint
from app.cases.filters import CaseFilter, where_clauses
from app.db import driver_rows
from app.memo import Memo
from app.models import Attempt, JudgeVerdict, Task
from pipeline.vocabulary import DIMENSIONS

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

    def __len__(self) -> int:
        return len(self.attempt_id)

    def value(self, facet: str, at: int) -> str:
        if facet == "verdict":
            return "pass" if self.passed[at] else "fail"
        return self.labels[facet][self.codes[facet][at]]


_kept: Memo[JudgedPool] = Memo(2)  # 220K attempts: about 12 MB each


def judged_pool(session: Session) -> JudgedPool:
    """The whole pool, built once per version of the data."""
    return _kept.get_or_make(fingerprint(session), lambda: _build(session))


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


def _build(session: Session) -> JudgedPool:
    # Read as driver tuples, not ORM rows: 220K of them.
    rows = driver_rows(session, judged_attempts(
        col(Attempt.id), col(Task.id), col(Task.source_image_id), col(JudgeVerdict.qualified),
        col(Attempt.round), col(JudgeVerdict.weighted_score), col(Task.direction),
        col(Task.modality), col(Task.disease), col(Task.outcome), col(Task.accepted_attempt_id),
        *(col(getattr(JudgeVerdict, d)) for d in DIMENSIONS)))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return JudgedPool(empty, empty, empty, np.zeros(0, dtype=bool), empty, np.zeros(0),
                          {f: empty for f in FACETS}, {f: () for f in FACETS},
                          np.zeros(0, dtype=bool), np.zeros((0, len(ANSWERS))))
    columns = list(zip(*rows, strict=True))
    attempt_id = np.asarray(columns[0], dtype=np.int64)
    accepted_id = np.asarray([-1 if a is None else a for a in columns[10]], dtype=np.int64)
    answers = np.asarray([columns[3], *columns[11:]], dtype=float).T  # None -> nan
    codes, labels = {}, {}
    for facet, values in zip(FACETS, columns[6:10], strict=True):
        # By hashing (pandas), not by sorting 220K strings: a third of the build otherwise.
        code, found = pd.factorize(pd.Series(values, dtype=object).fillna(""))
        codes[facet], labels[facet] = code.astype(np.int64), tuple(str(v) for v in found)
    return JudgedPool(
        attempt_id=attempt_id,
        task_id=np.asarray(columns[1], dtype=np.int64),
        image=np.asarray(columns[2], dtype=np.int64),
        passed=np.asarray(columns[3], dtype=bool),
        round=np.asarray(columns[4], dtype=np.int64),
        score=np.asarray([np.nan if s is None else s for s in columns[5]], dtype=float),
        codes=codes, labels=labels, accepted=accepted_id == attempt_id, answers=answers)


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
