"""A consistent copy of the database while the app keeps running."""

import shutil
import sqlite3
import subprocess
from pathlib import Path

from sqlalchemy.engine import make_url


class BackupError(RuntimeError):
    pass


def backup_database(url: str, target: Path) -> None:
    """SQLite: the online backup API (a consistent snapshot, WAL included).
    PostgreSQL: pg_dump in its custom format. The target must not exist yet."""
    if target.exists():
        raise BackupError(f"{target} exists already; choose a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or not Path(parsed.database).is_file():
            raise BackupError(f"no SQLite database at {parsed.database}")
        partial = target.with_name(target.name + ".partial")
        source, copy = sqlite3.connect(parsed.database), sqlite3.connect(partial)
        try:
            source.backup(copy)
        finally:
            copy.close()
            source.close()
        partial.replace(target)  # never leave a half-written backup under the real name
        return
    if shutil.which("pg_dump") is None:
        raise BackupError("pg_dump is not installed (apt-get install postgresql-client)")
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    done = subprocess.run(["pg_dump", "--format=custom", f"--file={target}", plain],
                          capture_output=True, text=True)
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {done.stderr.strip()}")


def restore_database(url: str, source: Path) -> None:
    """Replace the database's contents with a backup made by :func:`backup_database`.

    The backup is checked before anything is touched: a SQLite file must pass an integrity
    check and hold this app's schema; a PostgreSQL dump must be pg_dump's custom format.
    SQLite is copied in with the online backup API, under the database's lock, so a reader
    never sees half of it; PostgreSQL goes through pg_restore --clean in one transaction."""
    if not source.is_file():
        raise BackupError(f"{source}: no such file")
    parsed = make_url(url)
    with source.open("rb") as stream:
        head = stream.read(16)
    if parsed.get_backend_name() == "sqlite":
        if not head.startswith(b"SQLite format 3"):
            raise BackupError(f"{source}: not a SQLite database (a PostgreSQL dump needs a "
                              "PostgreSQL MEDBANANA_DATABASE_URL)")
        if not parsed.database:
            raise BackupError("the database URL names no SQLite file")
        _check_sqlite_backup(source)
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        backup, live = sqlite3.connect(source), sqlite3.connect(parsed.database)
        try:
            backup.backup(live)
        finally:
            live.close()
            backup.close()
        return
    if not head.startswith(b"PGDMP"):
        raise BackupError(f"{source}: not a pg_dump custom-format file (medbanana backup makes one)")
    if shutil.which("pg_restore") is None:
        raise BackupError("pg_restore is not installed (apt-get install postgresql-client)")
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    done = subprocess.run(["pg_restore", "--clean", "--if-exists", "--no-owner",
                           "--single-transaction", f"--dbname={plain}", str(source)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(f"pg_restore failed (nothing was changed): {done.stderr.strip()}")


def _check_sqlite_backup(source: Path) -> None:
    try:
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as check:
            verdict = check.execute("PRAGMA integrity_check").fetchone()[0]
            tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as error:
        raise BackupError(f"{source}: cannot be read as a database: {error}") from None
    if verdict != "ok":
        raise BackupError(f"{source}: fails SQLite's integrity check: {verdict}")
    if not {"alembic_version", "task", "app_user"} <= tables:
        raise BackupError(f"{source}: not a MedBanana Review database (its tables are missing)")
