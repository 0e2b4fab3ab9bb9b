"""Pausing a reader whose accuracy or pace drifts, and resuming them.

After every answer the reader's known-answer accuracy (app/readers/drift.py) and time per
case (app/readers/pace.py) are tested again from their reads in force. When either test
fires, the reader is paused in that study: they are told, in neutral words, that their reading
is paused and the study's organiser will be in touch; the admin sees which test fired, its
statistic and threshold, and the cases behind it. Nothing is lost: their answers and drafts
stay, and once resumed they go on where they stopped. A resumed reader's tests start again
from the resumption (their earlier known-answer cases still set their baseline).

The check runs after the answer is stored, for every answer alike, off the request: how long
the response took must not tell a reader which of their cases was a known-answer case.
"""

import logging
import threading
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.agreement.reads import vote
from app.errors import Conflict
from app.models import User, utcnow
from app.readers.accuracy import consensus_of_others
from app.readers.drift import CALIBRATED_AT, DROP, Drift, drift
from app.readers.pace import pace
from app.readers.qualification import Standing, practice_scores, standing
from app.readers.reads import ReaderRead, study_reads
from app.studies.models import Assignment, Design, Study, StudyItem
from app.studies.practice import requirement_of
from app.studies.reader_models import PauseCause, ReaderPause

log = logging.getLogger(__name__)
# The whole-study false-alarm rate, 5 %, is shared by the three tests; the accuracy tests are
# calibrated a little below their share (app/readers/drift.py CALIBRATED_AT). Measured in
# benchmarks/reader_drift.py.
KNOWN_ALPHA = 0.4 * CALIBRATED_AT
AGREEMENT_ALPHA = 0.01
PACE_ALPHA = 0.01
NEUTRAL = ("Your reading in this study is paused for now. Nothing you entered is lost. The "
           "study's organiser has been told and will be in touch; you will go on where you "
           "stopped.")


def active_pause(session: Session, study_id: int, user_id: int) -> ReaderPause | None:
    return session.scalars(select(ReaderPause).where(
        col(ReaderPause.study_id) == study_id, col(ReaderPause.user_id) == user_id,
        col(ReaderPause.resumed_at).is_(None)).order_by(col(ReaderPause.id).desc())).first()


@dataclass(frozen=True)
class Blocked:
    """Why a reader may not read a study now: not yet qualified in the practice it asks for
    (their standing there), or paused."""

    standing: Standing | None = None
    practice: Study | None = None
    pause: ReaderPause | None = None


def reading_block(session: Session, study: Study, user_id: int) -> Blocked | None:
    """None when the reader may read the study now."""
    requirement = requirement_of(study)
    if requirement is not None:
        now = standing(session, requirement, user_id)
        if not now.qualified:
            return Blocked(standing=now, practice=session.get(Study, requirement.practice_id))
    pause = active_pause(session, study.id or 0, user_id)
    return Blocked(pause=pause) if pause is not None else None


def pauses_of(session: Session, study_id: int) -> list[ReaderPause]:
    """Every pause of the study, newest first (resumed ones too: they are the record)."""
    return list(session.scalars(select(ReaderPause).where(col(ReaderPause.study_id) == study_id)
                                .order_by(col(ReaderPause.id).desc())))


def resume(session: Session, study: Study, user_id: int, admin: User, note: str = "") -> ReaderPause:
    found = active_pause(session, study.id or 0, user_id)
    if found is None:
        raise Conflict("this reader is not paused in this study")
    found.resumed_at, found.resumed_by, found.resume_note = utcnow(), admin.id, note.strip()[:2000]
    session.add(found)
    session.commit()
    return found


@dataclass(frozen=True)
class Verdict:
    cause: PauseCause
    statistic: float
    threshold: float
    cases: int
    reason: str


def _since(session: Session, study: Study, user_id: int) -> datetime | None:
    """When the reader was last resumed, or None."""
    return session.scalar(select(func.max(ReaderPause.resumed_at)).where(
        col(ReaderPause.study_id) == study.id, col(ReaderPause.user_id) == user_id))


def check_reader(session: Session, study: Study, user_id: int) -> Verdict | None:
    """Whether any test fires on the reader's reads now."""
    every = study_reads(session, study)
    reads = [r for r in every if r.user_id == user_id]
    resumed = _since(session, study, user_id)
    before = [r for r in reads if resumed is not None and r.answered_at <= resumed]
    after = [r for r in reads if resumed is None or r.answered_at > resumed]
    return (_accuracy(session, study, user_id, before, after)
            or _agreement(session, study, user_id, before, after, consensus_of_others(every))
            or _pace(session, study, user_id, after))


def _list_size(session: Session, study: Study, user_id: int, known: bool) -> int:
    query = select(func.count()).select_from(Assignment).join(
        StudyItem, col(StudyItem.id) == Assignment.item_id).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id)
    if known:
        query = query.where(col(StudyItem.known_answer_id).is_not(None))
    return int(session.scalar(query) or 0)


def _scores(reads: list[ReaderRead]) -> tuple[np.ndarray, np.ndarray]:
    known = sorted((r for r in reads if r.settled), key=lambda r: r.sequence)
    right = np.array([sum(r.answers[q] == a for q, a in (r.settled or {}).items()) for r in known])
    asked = np.array([len(r.settled or {}) for r in known])
    return right.astype(float), asked.astype(float)


def _accuracy(session: Session, study: Study, user_id: int, before: list[ReaderRead],
              after: list[ReaderRead]) -> Verdict | None:
    right, asked = _scores(after)
    if not len(right):
        return None
    prior_right, prior_asked = _scores(before)
    # The practice the study asked for is the reader's baseline too: a reader is measured
    # against their own qualifying accuracy from the first known-answer case on.
    requirement = requirement_of(study)
    cases, practice_right, practice_asked = (practice_scores(session, requirement.practice_id, user_id)
                                             if requirement else (0, 0, 0))
    horizon = _list_size(session, study, user_id, known=True) - len(prior_right)
    questions = max(1, round(float(np.median(asked))))
    found = drift(right, asked, float(prior_right.sum()) + practice_right,
                  float(prior_asked.sum()) + practice_asked, max(horizon, len(right)), questions,
                  len(prior_right) + cases, alpha=KNOWN_ALPHA)
    return _fell(PauseCause.accuracy, found, right, asked,
                  "Known-answer accuracy fell: {k} of {n} settled answers right ({share}) over "
                  "{cases} known-answer cases.")


def _fell(cause: PauseCause, found: Drift, right: np.ndarray, asked: np.ndarray,
          words: str) -> Verdict | None:
    """The verdict of an accuracy test that fired, its reason in ``words`` and the test's."""
    at = found.flagged_at
    if at is None:
        return None
    what = words.format(k=int(right.sum()), n=int(asked.sum()),
                        share=f"{right.sum() / asked.sum():.0%}", cases=len(right))
    return Verdict(cause, float(found.statistic[at - 1]), found.threshold, len(right),
                   f"{what} A self-starting CUSUM for a {DROP:.0%}-point drop crossed its "
                   f"threshold (S = {found.statistic[at - 1]:.2f} against h = "
                   f"{found.threshold:.2f}, set for its share of the 5 % false-alarm rate over "
                   "the reader's whole list).")


def _agreeing(reads: list[ReaderRead],
              consensus: dict[tuple[str, int], dict[str, bool]]) -> tuple[np.ndarray, np.ndarray]:
    """Per ordinary first read with a consensus of the others, in the reader's order: the
    questions it agrees on, and those the others settled."""
    rows = sorted((r for r in reads if not r.known and not r.repeat
                   and consensus.get((r.reader, r.item_id))), key=lambda r: r.sequence)
    settled = [consensus[(r.reader, r.item_id)] for r in rows]
    right = [sum(vote(r.answers[q]) == value for q, value in c.items())
             for r, c in zip(rows, settled, strict=True)]
    return np.array(right, dtype=float), np.array([len(c) for c in settled], dtype=float)


def _agreement(session: Session, study: Study, user_id: int, before: list[ReaderRead],
               after: list[ReaderRead], consensus: dict[tuple[str, int], dict[str, bool]]) -> Verdict | None:
    """The same test on the ordinary cases, against the other readers' majority: twenty times
    the reads of the known-answer cases, wherever the others have read the case too."""
    right, asked = _agreeing(after, consensus)
    if not len(right):
        return None
    prior_right, prior_asked = _agreeing(before, consensus)
    horizon = _list_size(session, study, user_id, known=False) - _list_size(
        session, study, user_id, known=True) - len(prior_right)
    found = drift(right, asked, float(prior_right.sum()), float(prior_asked.sum()),
                  max(horizon, len(right)), max(1, round(float(np.median(asked)))),
                  len(prior_right), alpha=AGREEMENT_ALPHA)
    return _fell(PauseCause.agreement, found, right, asked,
                  "Agreement with the other readers fell: {k} of {n} answers agreed with the "
                  "others' majority ({share}) over {cases} cases they have read too.")


def _pace(session: Session, study: Study, user_id: int, after: list[ReaderRead]) -> Verdict | None:
    timed = sorted((r for r in after if r.time_ms), key=lambda r: r.sequence)
    if not timed:
        return None
    found = pace([int(r.time_ms or 0) for r in timed], _list_size(session, study, user_id, known=False),
                 alpha=PACE_ALPHA)
    at = found.flagged_at
    if at is None:
        return None
    recent = [r.time_ms / 1000 for r in timed[-10:] if r.time_ms]
    earlier = [r.time_ms / 1000 for r in timed[:-10] if r.time_ms]
    return Verdict(PauseCause.time, float(found.statistic[at - 1]), found.threshold, len(timed),
                   f"Time per case fell: median {np.median(recent):.0f} s over the last "
                   f"{len(recent)} reads against {np.median(earlier):.0f} s before. A "
                   f"self-starting CUSUM for a halving of time crossed its threshold "
                   f"(S = {found.statistic[at - 1]:.2f} against h = {found.threshold:.2f}, set "
                   "for its share of the 5 % false-alarm rate over the reader's whole list).")


_watching: dict[tuple[int, int], threading.Lock] = {}
_watching_lock = threading.Lock()


def watch_reader(engine: Engine, study_id: int, user_id: int) -> ReaderPause | None:
    """Test the reader after an answer and pause them if a test fires (background work).
    One reader's checks run one at a time: two answers in quick succession once paused a
    reader twice."""
    with _watching_lock:
        lock = _watching.setdefault((study_id, user_id), threading.Lock())
    with lock:
        return _watch(engine, study_id, user_id)


def _watch(engine: Engine, study_id: int, user_id: int) -> ReaderPause | None:
    with Session(engine) as session:
        study = session.get(Study, study_id)
        # Practice is for learning: a reader is never paused in it.
        if study is None or not Design(study.design).rubric or study.practice:
            return None
        if active_pause(session, study_id, user_id) is not None:
            return None
        verdict = check_reader(session, study, user_id)
        if verdict is None:
            return None
        paused = ReaderPause(study_id=study_id, user_id=user_id, cause=verdict.cause.value,
                             reason=verdict.reason, statistic=verdict.statistic,
                             threshold=verdict.threshold, cases=verdict.cases)
        session.add(paused)
        session.commit()
        session.refresh(paused)
        log.warning("reader %s paused in study %s: %s", user_id, study_id, verdict.reason)
        return paused
