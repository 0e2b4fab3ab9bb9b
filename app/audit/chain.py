"""Appending to the audit log, one chain however many processes write.

A record's digest is the SHA-256 of the digest before it and its own content, so changing,
removing or inserting a record breaks every digest after it. The record is added in the
transaction of the change it records and written with it, or not at all.

One chain: on PostgreSQL, an appender takes a transaction-scoped advisory lock before it
takes its id, so ids follow the order of the chain and the lock is held until the change
commits; the next appender then reads the head this one wrote. On SQLite, the record is
inserted first, which takes the database's one write lock, and only then is the record
before it read. The digest column is unique as well, so a second record after one head can
never be stored. Appending is the last thing a transaction does before its commit, so the
lock is held for as short a time as can be.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, col, select

from app.audit.rows import VOUCHED, canonical, model_digest, vouched_table
from app.models import AuditRecord
from app.settings import get_settings

GENESIS = "0" * 64
# pg_advisory_xact_lock's key: "MBAUDIT" in ASCII, one number for the whole server.
LOCK_KEY = 0x4D4241554449_54


@dataclass(frozen=True)
class Head:
    records: int
    digest: str  # the last record's, or GENESIS for an empty log

    def __str__(self) -> str:
        return f"{self.records} records, head {self.digest}"


def content(record: AuditRecord) -> str:
    return canonical({"id": record.id, "at": record.at, "actor": record.actor,
                      "action": record.action, "subject": record.subject, "body": record.body})


def digest_of(prev: str, record: AuditRecord) -> str:
    return hashlib.sha256(f"{prev}\n{content(record)}".encode()).hexdigest()


def append(session: Session, action: str, *, actor: str, subject: str = "",
           body: dict[str, Any] | None = None) -> AuditRecord | None:
    """Add the record to the session's transaction, linked to the head; the caller commits.
    None, with nothing added, in a process started with MEDBANANA_AUDIT_LOG=false (only to
    measure the log's cost)."""
    if not get_settings().audit_log:
        return None
    postgres = session.get_bind().dialect.name == "postgresql"
    if postgres:
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
    if not session.exec(select(AuditRecord.id).limit(1)).first():
        _genesis(session)
    record = AuditRecord(actor=actor, action=action, subject=subject,
                         body=canonical(body or {}), prev="", digest=f"pending-{id(session)}")
    session.add(record)
    session.flush()  # takes the id (and on SQLite the write lock) before the head is read
    before = session.exec(select(AuditRecord).where(col(AuditRecord.id) < record.id)
                          .order_by(col(AuditRecord.id).desc()).limit(1)).first()
    record.prev = before.digest if before is not None else GENESIS
    record.digest = digest_of(record.prev, record)
    session.add(record)
    session.flush()
    return record


def _genesis(session: Session) -> None:
    """The first record says which rows were there before the log: those the log cannot
    vouch for, so verify names how many and checks every row after them."""
    before = {name: int(session.scalar(select(func.coalesce(func.max(vouched_table(name).c.id), 0)))
                        or 0) for name in VOUCHED}
    record = AuditRecord(actor="server", action="log started",
                         body=canonical({"rows_before_the_log": before}), prev=GENESIS,
                         digest=f"pending-genesis-{id(session)}")
    session.add(record)
    session.flush()
    record.digest = digest_of(GENESIS, record)
    session.add(record)
    session.flush()


def record_row(session: Session, row: SQLModel, *, actor: str, subject: str) -> AuditRecord | None:
    """An answer version or a decision, vouched for by its digest."""
    table, digest = model_digest(row)
    row_id = row.model_dump()["id"]
    assert table in VOUCHED, f"{table} is not a table the log vouches for"
    return append(session, f"{table} stored", actor=actor, subject=subject,
                  body={"row": {"table": table, "id": row_id, "sha256": digest}})


def record_export(engine: Engine, kind: str, target: str, manifest: dict[str, Any], *,
                  actor: str) -> AuditRecord | None:
    """An export, once written: its manifest's digest, which holds the head it was made at."""
    with Session(engine) as session:
        found = append(session, "export", actor=actor, subject=target, body={
            "kind": kind, "manifest_sha256": hashlib.sha256(canonical(manifest).encode()).hexdigest()})
        session.commit()
        if found is not None:
            session.refresh(found)
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


__all__ = ["GENESIS", "Head", "append", "content", "digest_of", "head_of", "manifest_stamp",
           "record_export", "record_row"]
