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
