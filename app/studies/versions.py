"""The versions of answers and decisions: appended, never changed, each recorded in the audit
log in the transaction that stores it, and refused once the study is locked (which is itself
recorded). Every design's answers and the adjudicator's decisions are stored through here."""

import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.audit import append, record_row
from app.errors import Conflict
from app.models import utcnow
from app.studies.models import (
    Adjudication,
    Answer,
    Assignment,
    PairAnswer,
    RealOrEditedAnswer,
    Study,
    StudyStatus,
)

VERSION_RETRIES = 5


class StudyLocked(Conflict):
    """The study is locked: nothing about its answers may change."""


class SubmissionIdReused(Conflict):
    """A submission id already stored for another case: storing nothing is the only safe
    answer, since returning that other answer would drop this one without a word."""


def ensure_open(study: Study) -> None:
    if study.status == StudyStatus.locked:
        raise StudyLocked(f"study {study.name!r} is locked; answers can no longer change")


def commit_if_open(session: Session, study: Study, *,
                   record: Callable[[], object] = lambda: None) -> None:
    """Commit the pending writes unless the study was locked meanwhile.

    The status is read again after the writes are flushed: SQLite then holds the write lock,
    and PostgreSQL's FOR SHARE waits for a lock being committed, so an answer either commits
    before the lock or not at all. ``record`` appends to the audit log after that check:
    the study's row first and the log's lock second, in the order a lock takes them too.
    """
    session.flush()
    status = session.scalar(select(Study.status).where(  # type: ignore[call-overload]
        col(Study.id) == study.id).with_for_update(read=True))
    if status == StudyStatus.locked:
        session.rollback()
        raise StudyLocked(f"study {study.name!r} is locked; answers can no longer change")
    record()
    session.commit()


Versioned = TypeVar("Versioned", Answer, Adjudication, RealOrEditedAnswer, PairAnswer)
Answered = TypeVar("Answered", Answer, RealOrEditedAnswer, PairAnswer)


def append_version(session: Session, study: Study, table: type[Versioned], owner: str,
                   owner_id: int, submission_id: str, make: Callable[[int], Versioned], *,
                   then: Callable[[], None] = lambda: None) -> Versioned:
    """Store a new version of the row that ``owner`` = ``owner_id`` keeps (an assignment's
    answer, an item's decision), numbered after its newest, with ``then``'s writes, unless
    the study was locked meanwhile. The same submission id twice stores it once; two
    submits racing for one version number: the loser retries with the next."""
    ensure_open(study)
    for _ in range(VERSION_RETRIES):
        existing = session.scalars(select(table).where(
            col(table.submission_id) == submission_id)).first()
        if existing is not None:
            if getattr(existing, owner) != owner_id:
                raise SubmissionIdReused(f"submission id {submission_id!r} was already "
                                         "used for another case; send a new one")
            return existing
        newest = session.scalar(select(func.coalesce(func.max(col(table.version)), 0))
                                .where(col(getattr(table, owner)) == owner_id))
        row = make(int(newest or 0) + 1)
        session.add(row)
        try:
            session.flush()
            then()
            commit_if_open(session, study, record=_recorder(session, study, row))
        except IntegrityError:
            session.rollback()
            continue
        session.refresh(row)
        return row
    raise RuntimeError(f"could not store the {table.__name__.lower()} after repeated version "
                       "conflicts")


def _recorder(session: Session, study: Study, row: Versioned) -> Callable[[], object]:
    return lambda: record_row(session, row, actor=_actor(session, row), subject=f"study {study.id}")


def _actor(session: Session, row: Answer | Adjudication | RealOrEditedAnswer | PairAnswer) -> str:
    """Who stored the row: the decision's adjudicator, or the reader of the assignment."""
    if isinstance(row, Adjudication):
        return f"user {row.user_id}"
    assignment = session.get(Assignment, row.assignment_id)
    return f"user {assignment.user_id}" if assignment is not None else "unknown"


def last_to_undo(session: Session, study: Study, user_id: int,
                 table: type[Answered]) -> tuple[Answered, Assignment] | None:
    """The reader's most recent answer in the study (in ``table``, the design's) and its read;
    None when there is none, or it is a retraction already. Every design's undo starts here."""
    ensure_open(study)
    query = (select(table, Assignment).join(Assignment, col(Assignment.id) == table.assignment_id)
             .where(col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id)
             .order_by(col(table.id).desc()).limit(1))
    found = session.execute(query).first()
    if found is None or found[0].retracted:
        return None
    return found[0], found[1]


def retraction(last: Answered, kept: tuple[str, ...], **extra: Any) -> Answered:
    """The version that retracts ``last``: the fields named in ``kept`` carried over (what it
    said stays on record), with an undo's own submission id. Every design's undo adds one."""
    fields: dict[str, Any] = {name: getattr(last, name) for name in kept} | extra
    return type(last)(assignment_id=last.assignment_id, version=last.version + 1,
                      submission_id=f"undo-{secrets.token_hex(12)}", retracted=True, **fields)


def retract_last(session: Session, study: Study, user_id: int, table: type[Answered],
                 kept: tuple[str, ...]) -> Assignment | None:
    """A design's undo when nothing comes back as a draft: the reader's last answer in
    ``table`` retracted, and its read; None when there is nothing to undo."""
    found = last_to_undo(session, study, user_id, table)
    if found is None:
        return None
    store_version(session, study, retraction(found[0], kept))
    return found[1]


def store_version(session: Session, study: Study, row: Versioned) -> None:
    """A version made whole by its caller (an undo's retraction), stored with its record in
    the audit log unless the study was locked meanwhile."""
    session.add(row)
    session.flush()
    commit_if_open(session, study, record=_recorder(session, study, row))


def lock_study(session: Session, study: Study, *, actor: str = "shell") -> None:
    """Lock the study, recorded in the audit log with how many answers it holds."""
    study.status, study.locked_at = StudyStatus.locked.value, utcnow()
    session.add(study)
    session.flush()  # the study's row first, then the log's lock: as an answer takes them
    append(session, "study locked", actor=actor, subject=f"study {study.id}",
           body={"study": study.name, "answers": _answer_count(session, study)})
    session.commit()


def _answer_count(session: Session, study: Study) -> int:
    tables = (Answer, RealOrEditedAnswer, PairAnswer)
    return sum(int(session.scalar(
        select(func.count()).select_from(table).join(Assignment, col(Assignment.id) == table.assignment_id)
        .where(col(Assignment.study_id) == study.id)) or 0) for table in tables)
