"""What kept figures rest on, asked of the database in one statement.

A page whose data has not changed asks this and nothing more of its figures. Every part is
an index look-up (a newest id, a count over an index). They travel as one SELECT of scalar
subqueries, so a kept page costs one round trip on PostgreSQL as on SQLite.
"""

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, ScalarSelect, column, event, func, select, table
from sqlalchemy.orm import ORMExecuteState
from sqlmodel import Session, col

from app.models import AuditEvent, DataChange, JudgeVerdict, Run, Task
from pipeline.vocabulary import Outcome

Part = ScalarSelect[Any]

# The studies' tables by name: app.studies builds on this module, not the other way.
_answer = table("answer", column("id"), column("assignment_id"))
_assignment = table("assignment", column("id"), column("study_id"))
_adjudication = table("adjudication", column("id"), column("study_id"))
_item = table("study_item", column("id"), column("study_id"), column("attempt_id"))
_reader = table("study_reader", column("id"), column("study_id"))
_pause = table("reader_pause", column("id"), column("study_id"), column("resumed_at"))

# A migration may rewrite rows in place and change no id.
REVISION: Part = select(column("version_num")).select_from(table("alembic_version")).scalar_subquery()

# Newest task, newest run, and how many runs are running: a regeneration run is created when
# it starts and updates its task when it ends, so the newest ids alone would miss the end;
# the count of open runs (an index look-up) changes then.
DATA_VERSION: tuple[Part, ...] = (
    select(func.max(Task.id)).scalar_subquery(),
    select(func.max(Run.id)).scalar_subquery(),
    select(func.count()).select_from(Run).where(col(Run.outcome) == Outcome.running).scalar_subquery())

NEWEST_VERDICT: Part = select(func.max(JudgeVerdict.id)).scalar_subquery()

# The metrics arrive in the background after an import, and a digest is written to a row
# measured before: every insert, update and delete is counted by the table's triggers.
METRICS: Part = (select(col(DataChange.changes)).where(col(DataChange.name) == "attempt_metric")
                 .scalar_subquery())

# Every change to an account (a reader's qualification, experience and certification
# included, which a report states) is written to the audit log with it.
ACCOUNTS: Part = select(func.max(AuditEvent.id)).scalar_subquery()


def state(session: Session, parts: Sequence[Part]) -> tuple[Any, ...]:
    """The parts' values, in one round trip."""
    return tuple(session.connection().execute(select(*parts)).one())


def study_state(session: Session, study_id: int) -> tuple[object, ...]:
    """Everything a study's figures and its checks on its readers rest on (the schema's
    revision, ``study_parts`` and ``readers_parts``): the figures and the checks on one page
    share one statement."""
    parts = (REVISION, *study_parts([study_id]), *readers_parts(study_id))
    return once_per_transaction(session, ("study", study_id),
                                lambda: (address(session), study_id, *state(session, parts)))


def once_per_transaction(session: Session, key: Hashable,
                         make: Callable[[], tuple[object, ...]]) -> tuple[object, ...]:
    """``make()``, a state read from the database, asked once per transaction under ``key``:
    a page that asks for it several times reads it once. A commit starts a new transaction,
    and a write in this one forgets it (``_forget_on_write``), so it is read again then."""
    session.connection()  # begins the transaction the state is held for
    transaction = session.get_transaction()
    held = session.info.get(_HELD)
    if held is None or held[0] is not transaction:
        held = (transaction, {})
        session.info[_HELD] = held
    states: dict[Hashable, tuple[object, ...]] = held[1]
    if key not in states:
        states[key] = make()
    return states[key]


_HELD = "fingerprints: states read in this transaction"


@event.listens_for(Session, "after_flush")
def _forget_after_flush(session: Session, context: Any) -> None:
    session.info.pop(_HELD, None)


@event.listens_for(Session, "do_orm_execute")
def _forget_on_write(execute: ORMExecuteState) -> None:
    if not execute.is_select:
        execute.session.info.pop(_HELD, None)


def address(session: Session) -> str:
    """The database's address: one process may serve (or test) more than one database, whose
    figures must not be shared."""
    return session.get_bind().engine.url.render_as_string(hide_password=True)


def fingerprint(session: Session, *more: Part) -> tuple[object, ...]:
    """Changes whenever an import, a pipeline run, a re-judgement or a migration changes the
    data set's figures, and whenever one of ``more`` changes."""
    return (address(session), *state(session, (REVISION, *DATA_VERSION, NEWEST_VERDICT, *more)))


def data_of(found: tuple[object, ...]) -> tuple[object, ...]:
    """The data set's part of a ``fingerprint`` taken with more parts."""
    return found[:3 + len(DATA_VERSION)]  # the address, the revision, the version, the verdict


def study_parts(study_ids: Sequence[int]) -> tuple[Part, ...]:
    """What a study's figures rest on: its answers (a retraction or a new version is a new
    row), its adjudications, the newest verdict on its edits (a re-judgement), and the
    readers' accounts."""
    answers = (select(_answer.c.id).join(_assignment, _assignment.c.id == _answer.c.assignment_id)
               .where(_in(_assignment.c.study_id, study_ids)).subquery())
    return (
        select(func.count()).select_from(answers).scalar_subquery(),
        select(func.max(answers.c.id)).scalar_subquery(),
        select(func.count()).select_from(_adjudication).where(
            _in(_adjudication.c.study_id, study_ids)).scalar_subquery(),
        select(func.max(_adjudication.c.id)).where(
            _in(_adjudication.c.study_id, study_ids)).scalar_subquery(),
        select(func.max(JudgeVerdict.id)).where(col(JudgeVerdict.attempt_id).in_(select(
            _item.c.attempt_id).where(_in(_item.c.study_id, study_ids)))).scalar_subquery(),
        ACCOUNTS)


def readers_parts(study_id: int) -> tuple[Part, ...]:
    """What a study's checks on its readers rest on beyond its answers: who reads it, its
    pauses (a resumption changes a row, so resumed ones are counted) and its items (an
    adaptive study adds them batch by batch)."""
    return (
        select(func.max(_reader.c.id)).where(_reader.c.study_id == study_id).scalar_subquery(),
        select(func.count()).select_from(_reader).where(_reader.c.study_id == study_id).scalar_subquery(),
        select(func.max(_pause.c.id)).where(_pause.c.study_id == study_id).scalar_subquery(),
        select(func.count()).select_from(_pause).where(_pause.c.study_id == study_id,
                                                       _pause.c.resumed_at.is_not(None)).scalar_subquery(),
        select(func.max(_item.c.id)).where(_item.c.study_id == study_id).scalar_subquery())


def _in(column_: Any, ids: Sequence[int]) -> ColumnElement[bool]:
    # One study is an equality, which both engines plan as an index look-up.
    return column_ == ids[0] if len(ids) == 1 else column_.in_(list(ids))
