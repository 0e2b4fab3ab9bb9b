"""The one engine factory and session helpers shared by the web app, the CLI and the pipeline."""

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SAWarning
from sqlmodel import Session, SQLModel, create_engine

from app.memo import paused_collection
from app.resources import resource_dir
from app.sqlite_writes import TurnConnection


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # Takes effect only when the file is new. Most rows carry kilobytes of text, and large
    # pages cut overflow chains: the 88K-task import runs about a third faster than at 4 KiB.
    cursor.execute("PRAGMA page_size=32768")
    # WAL lets the web app read while an import or a pipeline job writes.
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL syncs the WAL at every commit, so an acknowledged answer survives a power cut,
    # not only a killed process. Imports commit once per file, so they barely notice.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


# Connections beyond the request threads': the background work (previews, reader checks,
# the pipeline worker, warm-ups) takes its own.
BACKGROUND_CONNECTIONS = 8


def make_engine(url: str, request_threads: int | None = None) -> Engine:
    """``request_threads``: the route threads of the process (settings.request_threads); the
    pool then holds one connection for each and BACKGROUND_CONNECTIONS more, so a route never
    waits for a connection another route holds (SQLAlchemy's default of 5 + 10 against
    anyio's 40 threads is what locked the server at 50 readers)."""
    parsed = make_url(url)
    pool: dict[str, Any] = {}
    if request_threads is not None and parsed.database not in (None, "", ":memory:"):
        pool = {"pool_size": request_threads, "max_overflow": BACKGROUND_CONNECTIONS,
                "pool_timeout": 30}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # TurnConnection: this process's writers take turns on a lock, not SQLite's sleeps.
        engine = create_engine(url, connect_args={"check_same_thread": False,
                                                  "factory": TurnConnection}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    # Times are stored as UTC without a zone: a server whose TimeZone is local would turn
    # each aware UTC time into its own wall-clock time on the way in.
    connect = {"options": "-c timezone=UTC"} if parsed.get_backend_name() == "postgresql" else {}
    return create_engine(url, pool_pre_ping=True, connect_args=connect, **pool)


# A worker stopped in the middle of a transaction (paused, swapped out, cut off) must not
# keep its locks: PostgreSQL ends such a session after this long, and its locks go with it.
STALLED_TRANSACTION = "20s"


def end_if_stalled(session: Session, *, lock_wait: str | None = None) -> None:
    """For a transaction that takes a lock others wait for (a job's row, a model's quota
    row): on PostgreSQL, the server ends it if its client goes silent inside it. With
    ``lock_wait``, a lock not had within that time is an OperationalError, not a wait."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text(f"SET LOCAL idle_in_transaction_session_timeout = "
                             f"'{STALLED_TRANSACTION}'"))
        if lock_wait is not None:
            session.execute(text(f"SET LOCAL lock_timeout = '{lock_wait}'"))


def serialised(session: Session, key: int) -> None:
    """Inside the caller's transaction: wait for, then hold until commit, the lock named
    ``key``, so that a check and the write it allows are one step for every process (two
    clicks at once both found no such job, and both made it). PostgreSQL: an advisory lock;
    SQLite: the database's write lock, which its first write takes."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
    else:
        # A write that changes nothing still takes the write lock (the statement opens the
        # database for writing before it looks at any row).
        session.execute(text("UPDATE job SET id = id WHERE 0"))


def driver_rows(session: Session, query: Any) -> list[tuple[Any, ...]]:
    """A query's rows as the database driver returns them (plain tuples), for the few reads
    that load a whole table's columns into numpy. SQLAlchemy's per-row objects doubled the
    time of a 220K-row read. Only for columns the driver already returns as wanted: integers,
    floats, strings and booleans (SQLite's 0/1), never dates or JSON."""
    with paused_collection():  # hundreds of thousands of tuples, none in a cycle
        result = session.connection().execute(query)
        try:
            return list(result.cursor.fetchall())
        finally:
            result.close()


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """For Alembic: the full-text tables (migration 0001), the sort indexes on expressions
    (migration 0009), PostgreSQL's facet indexes (migration 0028) and the partial index of
    undigested edits (migration 0039) are made by hand, so autogenerate must neither drop
    nor compare them."""
    return not ((type_ == "table" and (name or "").startswith("task_search"))
                or (type_ == "index" and (name or "").startswith(
                    ("ix_task_sort_", "ix_task_facet_", "ix_attempt_metric_undigested"))))


# SQLAlchemy cannot reflect those expression indexes and says so whenever Alembic compares
# the schema; they are kept out of the comparison on purpose (above), so the note is noise.
warnings.filterwarnings("ignore", message=r"Skipped unsupported reflection of expression-based index "
                        r"ix_task_sort_", category=SAWarning)


def schema_revision(session: Session) -> str | None:
    """The Alembic revision the database is at (None before the first migration ran)."""
    return session.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (the only way tables are created)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resource_dir("app.migrations")))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def insert_new(session: Session, model: type[SQLModel], rows: Sequence[SQLModel]) -> None:
    """Insert the rows whose primary key is not taken yet, and skip the others: two workers
    measuring the same thing store it once, with no unique-key error on either database."""
    if not rows:
        return
    table = model.__table__  # type: ignore[attr-defined]
    dialect = session.get_bind().dialect.name
    insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
    values = [{c.name: getattr(row, c.name) for c in table.columns} for row in rows]
    session.execute(insert(table).values(values).on_conflict_do_nothing())
