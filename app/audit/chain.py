"""Appending to the audit log, one chain however many processes write.

A record's digest is the SHA-256 of the digest before it (``prev``) and its own content, so
changing, removing or inserting a record breaks the chain there. The record is added in the
transaction of the change it records and written with it, or not at all.

One chain: the appender first takes the database's write turn (on PostgreSQL a
transaction-scoped advisory lock, on SQLite the database's one write lock), then reads the
head and inserts the record after it; the turn is held until the change commits, so the next
appender reads the head this one wrote. ``prev`` is unique as well, so two records can never
follow one head. Appending is the last thing a transaction does before its commit, so the
turn is held for as short a time as can be: one read and one insert.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, col, select

from app.audit.rows import VOUCHED, canonical, model_digest, vouched_table
from app.models import AuditRecord, utcnow

GENESIS = "0" * 64
# pg_advisory_xact_lock's key: "MBAUDIT" in ASCII, one number for the whole server.
LOCK_KEY = 0x4D4241554449_54
TABLE = AuditRecord.__table__  # type: ignore[attr-defined]


class _Switch:
    on = True


# Off only in a server started with MEDBANANA_AUDIT_LOG=false (create_app sets it), to measure
# what the log costs; read from no settings here, so the domain caches none of its own.
_switch = _Switch()


def keep_log(on: bool) -> None:
    _switch.on = on


@dataclass(frozen=True)
class Head:
    records: int
    digest: str  # the last record's, or GENESIS for an empty log

    def __str__(self) -> str:
        return f"{self.records} records, head {self.digest}"


def digest_of(prev: str, at: datetime, actor: str, action: str, subject: str, body: str) -> str:
    said = canonical({"at": at, "actor": actor, "action": action, "subject": subject, "body": body})
    return hashlib.sha256(f"{prev}\n{said}".encode()).hexdigest()


def record_digest(record: AuditRecord) -> str:
    """What ``record``'s digest must be, from its stored content."""
    return digest_of(record.prev, record.at, record.actor, record.action, record.subject,
                     record.body)


def append(session: Session, action: str, *, actor: str, subject: str = "",
           body: dict[str, Any] | None = None) -> str | None:
    """Add the record to the session's transaction, linked to the head; the caller commits.
    Returns its digest; None, with nothing added, in a process started with
    MEDBANANA_AUDIT_LOG=false (only to measure the log's cost)."""
    if not _switch.on:
        return None
    _take_turn(session)
    head = session.scalar(select(col(AuditRecord.digest)).order_by(col(AuditRecord.id).desc())
                          .limit(1))
    if head is None:
        head = _genesis(session)
    return _insert(session, head, action, actor, subject, canonical(body or {}))


def _take_turn(session: Session) -> None:
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
    else:
        # A write that changes nothing takes SQLite's write lock (and this process's write
        # turn, app/sqlite_writes.py): no other writer can append until this one commits.
        session.execute(text("UPDATE audit_record SET id = id WHERE 0 = 1"))


def _insert(session: Session, prev: str, action: str, actor: str, subject: str, body: str) -> str:
    # Hashed as UTC to the microsecond, which every database here keeps and gives back.
    at = utcnow()
    digest = digest_of(prev, at, actor, action, subject, body)
    session.execute(insert(TABLE).values(at=at, actor=actor, action=action, subject=subject,
                                         body=body, prev=prev, digest=digest))
    return digest


def _genesis(session: Session) -> str:
    """The first record says which rows were there before the log: those the log cannot
    vouch for, so verify names how many and checks every row after them."""
    before = {name: int(session.scalar(select(func.coalesce(func.max(vouched_table(name).c.id), 0)))
                        or 0) for name in VOUCHED}
    return _insert(session, GENESIS, "log started", "server", "",
                   canonical({"rows_before_the_log": before}))


def record_row(session: Session, row: SQLModel, *, actor: str, subject: str) -> str | None:
    """An answer version or a decision, vouched for by its digest."""
    table, digest = model_digest(row)
    row_id = row.model_dump()["id"]
    assert table in VOUCHED, f"{table} is not a table the log vouches for"
    return append(session, f"{table} stored", actor=actor, subject=subject,
                  body={"row": {"table": table, "id": row_id, "sha256": digest}})


def record_export(engine: Engine, kind: str, target: str, manifest: dict[str, Any], *,
                  actor: str) -> str | None:
    """An export, once written: its manifest's digest, which holds the head it was made at."""
    with Session(engine) as session:
        found = append(session, "export", actor=actor, subject=target, body={
            "kind": kind, "manifest_sha256": hashlib.sha256(canonical(manifest).encode()).hexdigest()})
        session.commit()
        return found


def manifest_stamp(engine: Engine) -> dict[str, Any]:
    """What an export's manifest and a report say of the log: its head when they were made,
    which `medbanana audit verify` prints, so a reviewer can hold one against the other."""
    with Session(engine) as session:
        head = head_of(session)
    return {"records": head.records, "head_sha256": head.digest,
            "check": "medbanana audit verify: this head must be one of its records"}


def head_of(session: Session) -> Head:
    last = session.exec(select(AuditRecord).order_by(col(AuditRecord.id).desc()).limit(1)).first()
    count = session.scalar(select(func.count()).select_from(AuditRecord)) or 0
    return Head(int(count), last.digest if last is not None else GENESIS)


__all__ = ["GENESIS", "Head", "append", "digest_of", "head_of", "manifest_stamp",
           "record_digest", "record_export", "record_row"]
