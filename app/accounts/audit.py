"""The accounts' lines: who did what to which account, and when. Appended in the same
transaction as the change it records, so a change never lands without its line (or the
reverse); the accounts page lists them newest first. Each is also a record of the
tamper-evident audit log (app/audit), which a reviewer can verify."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from app.audit import append
from app.models import AuditEvent, User, as_utc


def note(session: Session, action: str, subject: User | None, actor: User | None,
         detail: str = "") -> None:
    """Add the line to the session, and its record to the tamper-evident log (app/audit);
    the caller's commit writes both with the change."""
    session.add(AuditEvent(actor_id=actor.id if actor else None, action=action,
                           subject_id=subject.id if subject else None, detail=detail))
    append(session, action, actor=actor.name if actor else "shell",
           subject=subject.name if subject else "", body={"detail": detail} if detail else {})


@dataclass(frozen=True)
class AuditLine:
    at: datetime
    actor: str  # "shell" for the command line
    action: str
    subject: str
    detail: str


def audit_log(session: Session, limit: int = 200, offset: int = 0) -> tuple[list[AuditLine], int]:
    """A page of the log, newest first, and how many lines there are in all."""
    actor, subject = aliased(User), aliased(User)
    query = (select(AuditEvent, col(actor.name), col(subject.name))
             .outerjoin(actor, col(actor.id) == col(AuditEvent.actor_id))
             .outerjoin(subject, col(subject.id) == col(AuditEvent.subject_id))
             .order_by(col(AuditEvent.id).desc()).offset(offset).limit(limit))
    lines = [AuditLine(at=as_utc(event.at), actor=actor_name or "shell", action=event.action,
                       subject=subject_name or "", detail=event.detail)
             for event, actor_name, subject_name in session.exec(query)]
    total = session.scalar(select(func.count()).select_from(AuditEvent)) or 0
    return lines, total
