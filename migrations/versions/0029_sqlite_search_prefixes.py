"""SQLite: the search table keeps prefix indexes for prefixes of 1 to 10 characters

The last word of a search matches as a prefix, so that results appear while the user types.
Without a prefix index FTS5 answers a prefix by merging the whole document list of every term
that starts with it before it can hand out the first page: 11-18 ms for a word most of the 88K
tasks hold ("pleural"), on every page. With one, the prefix is a term of its own and a page
reads 51 entries (0.02-0.05 ms). Longer prefixes are words of 11 characters or more, whose
lists are short. The index makes the table 3 MB to 15 MB and its build 3 s to 8 s on 88K
tasks (benchmarks/pages.py, benchmarks/import_scale.py). FTS5 cannot change the option of a
table in place, so the table is built anew from its documents; PostgreSQL is unchanged.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26 13:20:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0029'
down_revision: str | None = '0028'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PREFIXES = "1 2 3 4 5 6 7 8 9 10"


def _rebuild(options: str) -> None:
    op.execute("CREATE VIRTUAL TABLE task_search_rebuilt USING fts5("
               f"body, tokenize='porter unicode61', detail='none'{options})")
    op.execute("INSERT INTO task_search_rebuilt (rowid, body) SELECT rowid, body FROM task_search")
    op.execute("DROP TABLE task_search")
    op.execute("ALTER TABLE task_search_rebuilt RENAME TO task_search")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild(f", prefix='{PREFIXES}'")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild("")
