"""Pausing a reader whose known-answer accuracy drops, and resuming them.

Only known answers pause a reader. After an answer, the reader's known-answer cases (those
since they were last resumed) are tested for a drop (app/readers/changepoint.py): a steady
reader is paused in a study with probability STUDY_ALPHA at most over the whole study, every
reader together, whatever the cases' difficulty, the questions they settle or the length of
the list. Agreeing with the other readers, or reading faster than before, is information for
the study's organiser, shown on the study page as a flag (app/readers/flags.py), never a
reason to stop a radiologist: a reader who is right while the others share a mistake must not
be the one stopped.

A test that fires does not stop the reader at once: the pause takes effect after a random
number of further reads (PAUSE_AFTER), so the screen that says reading is paused does not
point at the known-answer case that fired it. The reader is told, in neutral words, that
their reading is paused and the study's organiser will be in touch; the admin sees the test,
its statistic and threshold, and the cases behind it. Nothing is lost: answers and drafts
stay, and once resumed the reader goes on where they stopped, their test started afresh.

The check runs after the answer is stored, off the request, one pending per reader and study
(app/background.py run_coalesced), and reads that reader's known-answer reads alone.
"""

import logging
import random
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.claims import claimed
from app.errors import Conflict
from app.models import User, utcnow
from app.readers.changepoint import Changepoint
from app.readers.changepoint import test as changepoint_test
from app.readers.known_reads import KnownRead, known_reads
from app.readers.qualification import Standing, standing
from app.studies.models import Assignment, Design, Study, StudyItem, StudyReader
from app.studies.practice import requirement_of
from app.studies.reader_models import PauseCause, ReaderPause
from app.studies.worklist import is_known_case, reader_progress

log = logging.getLogger(__name__)
STUDY_ALPHA = 0.05  # a steady reader paused in a study, every reader together, at most
CHECK_WAIT = 60.0  # seconds a check waits for the one before it on the same reader
PAUSE_AFTER = (1, 8)  # further reads, drawn at random, before a fired test's pause holds
NEUTRAL = ("Your reading in this study is paused for now. Nothing you entered is lost. The "
           "study's organiser has been told and will be in touch; you will go on where you "
           "stopped.")


def reader_alpha(readers: int) -> float:
    """Each reader's share of the study's rate: with R readers, R chances to pause someone."""
    return STUDY_ALPHA / max(1, readers)


def in_force(pause: ReaderPause, done: int) -> bool:
    """Whether a pause stops the reader now, after ``done`` reads of theirs."""
    return pause.effective_after is None or done >= pause.effective_after


def open_pause(session: Session, study_id: int, user_id: int) -> ReaderPause | None:
    """The reader's pause not yet resumed, in force or still to take effect."""
    return session.scalars(select(ReaderPause).where(
        col(ReaderPause.study_id) == study_id, col(ReaderPause.user_id) == user_id,
        col(ReaderPause.resumed_at).is_(None)).order_by(col(ReaderPause.id).desc())).first()


def active_pause(session: Session, study_id: int, user_id: int) -> ReaderPause | None:
    """The pause that stops the reader now, if any."""
    found = open_pause(session, study_id, user_id)
    if found is None or found.effective_after is None:
        return found
    study = session.get(Study, study_id)
    done = reader_progress(session, study, user_id).done if study is not None else 0
    return found if in_force(found, done) else None


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
    found = open_pause(session, study.id or 0, user_id)
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
    """Whether the known-answer test fires on the reader's reads now."""
    resumed = _since(session, study, user_id)
    reads = known_reads(session, study, user_id)
    after = [r for r in reads if resumed is None or r.answered_at > resumed]
    if not after:
        return None
    readers = int(session.scalar(select(func.count()).select_from(StudyReader).where(
        col(StudyReader.study_id) == study.id)) or 1)
    listed = _known_listed(session, study, user_id) - (len(reads) - len(after))
    found = known_test(study, user_id, after, listed, reader_alpha(readers), offset=len(reads) - len(after))
    return _verdict(found, after, readers)


def known_test(study: Study, user_id: int, reads: list[KnownRead], listed: int, alpha: float,
               offset: int = 0) -> Changepoint:
    """The change-point test on the share of settled answers right, case by case in the
    reader's order; ties broken by a draw fixed per reader and place (from the study's
    secret: the same at every look, and no reader can rebuild it). ``listed``: the
    known-answer cases in the reader's list (since their resumption), what ``alpha`` holds
    over; ``offset``: the cases before the resumption (the draw continues past them)."""
    draw = random.Random(f"{study.order_secret}:known-ties:{user_id}")
    ties = np.array([draw.random() for _ in range(offset + len(reads))])[offset:]
    return changepoint_test(np.array([r.share for r in reads]), ties, listed, alpha)


def _known_listed(session: Session, study: Study, user_id: int) -> int:
    return int(session.scalar(select(func.count()).select_from(Assignment).join(
        StudyItem, col(StudyItem.id) == Assignment.item_id).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id,
        col(StudyItem.known_answer_id).is_not(None))) or 0)


def _verdict(found: Changepoint, reads: list[KnownRead], readers: int) -> Verdict | None:
    at = found.flagged_at
    if at is None:
        return None
    right = sum(r.right for r in reads[:at])
    asked = sum(r.asked for r in reads[:at])
    recent = reads[max(0, at - 10):at]
    recent_share = sum(r.right for r in recent) / max(1, sum(r.asked for r in recent))
    return Verdict(PauseCause.accuracy, float(found.statistic[at - 1]), found.threshold, at,
                   f"Known-answer accuracy fell: {recent_share:.0%} of settled answers right "
                   f"over the last {len(recent)} known-answer cases, {right} of {asked} "
                   f"({right / max(1, asked):.0%}) over all {at}. A rank change-point test "
                   f"(Pettitt; Hawkins and Deng) crossed its threshold (G = "
                   f"{found.statistic[at - 1]:.2f} against c = {found.threshold:.2f}, set so "
                   f"that a steady reader is paused in at most {STUDY_ALPHA:.0%} of studies, "
                   f"{readers} reader{'s' if readers != 1 else ''} together).")


def moves_the_test(session: Session, study: Study, assignment: Assignment) -> bool:
    """Whether an answer just stored calls for a check: only a known-answer case outside a
    practice can move the pause's test, so an ordinary answer costs no check at all."""
    return (Design(study.design).rubric and not study.practice
            and is_known_case(session, assignment))


def watch_reader(engine: Engine, study_id: int, user_id: int) -> ReaderPause | None:
    """Test the reader after an answer and pause them if a test fires (background work).
    One reader's checks run one at a time, in every server process together (app/claims.py):
    two answers in quick succession once paused a reader twice. A pause takes effect after a
    random number of further reads."""
    with claimed(engine, ("watch-reader", study_id, user_id), wait=CHECK_WAIT) as mine:
        if not mine:
            log.warning("reader %s in study %s: another check held theirs for %.0f s; this "
                        "one is skipped (the next known-answer case asks again)",
                        user_id, study_id, CHECK_WAIT)
            return None
        return _watch(engine, study_id, user_id)


def _watch(engine: Engine, study_id: int, user_id: int) -> ReaderPause | None:
    with Session(engine) as session:
        study = session.get(Study, study_id)
        # Practice is for learning: a reader is never paused in it.
        if study is None or not Design(study.design).rubric or study.practice:
            return None
        if open_pause(session, study_id, user_id) is not None:
            return None
        verdict = check_reader(session, study, user_id)
        if verdict is None:
            return None
        progress = reader_progress(session, study, user_id)
        delay = random.Random(f"{study.order_secret}:pause-after:{user_id}:{verdict.cases}"
                              ).randint(*PAUSE_AFTER)
        paused = ReaderPause(study_id=study_id, user_id=user_id, cause=verdict.cause.value,
                             reason=verdict.reason, statistic=verdict.statistic,
                             threshold=verdict.threshold, cases=verdict.cases,
                             effective_after=min(progress.done + delay, progress.total))
        session.add(paused)
        session.commit()
        session.refresh(paused)
        log.warning("reader %s paused in study %s: %s", user_id, study_id, verdict.reason)
        return paused
