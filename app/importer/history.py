"""What each import read and what it could not take: files, counts and problems."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.models import DataRoot, ImportFile, ImportProblem


@dataclass(frozen=True)
class ImportedFile:
    id: int
    root: str
    relpath: str
    file_format: str
    size: int
    runs_added: int
    problems: int
    imported_at: datetime


@dataclass(frozen=True)
class ProblemPage:
    items: list[ImportProblem]
    kinds: list[tuple[str, int]]
    total: int
    next_after: int | None


def has_synthetic_data(session: Session) -> bool:
    """True when any imported root carries the demo generator's marker file."""
    query = select(col(DataRoot.id)).where(col(DataRoot.synthetic).is_(True)).limit(1)
    return session.execute(query).first() is not None


def list_import_files(session: Session) -> list[ImportedFile]:
    query = (select(ImportFile, col(DataRoot.path))
             .join(DataRoot, col(DataRoot.id) == ImportFile.root_id)
             .order_by(col(ImportFile.id).desc()))
    return [
        ImportedFile(id=f.id or 0, root=root, relpath=f.relpath, file_format=f.file_format,
                     size=f.size, runs_added=f.runs_added, problems=f.problems,
                     imported_at=f.imported_at)
        for f, root in session.execute(query)
    ]


def list_problems(session: Session, *, kind: str | None, file_id: int | None,
                  after: int | None, limit: int) -> ProblemPage:
    base = select(ImportProblem)
    if file_id is not None:
        base = base.where(col(ImportProblem.import_file_id) == file_id)
    kinds_query = (select(col(ImportProblem.kind), func.count()).group_by(col(ImportProblem.kind))
                   .order_by(col(ImportProblem.kind)))
    if file_id is not None:
        kinds_query = kinds_query.where(col(ImportProblem.import_file_id) == file_id)
    kinds = [(k, n) for k, n in session.execute(kinds_query)]
    if kind:
        base = base.where(col(ImportProblem.kind) == kind)
    total = sum(n for k, n in kinds if not kind or k == kind)
    if after is not None:
        base = base.where(col(ImportProblem.id) > after)
    rows = list(session.scalars(base.order_by(col(ImportProblem.id)).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return ProblemPage(items=rows, kinds=kinds, total=total,
                       next_after=rows[-1].id if more and rows else None)
