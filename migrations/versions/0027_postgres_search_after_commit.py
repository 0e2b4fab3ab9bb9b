"""PostgreSQL: text-search vectors filled after an import's commit, and lz4 for long texts

The vector of each task's document was a generated column, computed inside the import's
transaction: three fifths of the 88K-task import's server time, all of it on the one
connection that also writes the rows. It becomes a plain column that the importer fills
from a second connection while it writes the next file; a row not yet filled has NULL
there, and the search reads its body instead (found through a partial index), so a
search never misses a committed task. Long texts are compressed with lz4 where the server
has it: pglz cost four times as much server time on the import's 400 MB of instructions.
SQLite keeps its FTS5 table; nothing changes there.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-26 08:10:00
"""
from collections.abc import Sequence

from alembic import op
from sqlalchemy import text

revision: str = '0027'
down_revision: str | None = '0026'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LONG_TEXTS = {
    "attempt": ("instruction", "instruction_thinking"),
    "judge_verdict": ("reason", "thinking_summary", "raw_json"),
    "task_search": ("body",),
}


def _has_lz4() -> bool:
    row = op.get_bind().execute(text(
        "SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'")).first()
    return row is not None and "lz4" in (row[0] or [])


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE task_search ALTER COLUMN tsv DROP EXPRESSION")
    op.execute("CREATE INDEX ix_task_search_unindexed ON task_search (task_id) WHERE tsv IS NULL")
    if _has_lz4():
        for table, columns in LONG_TEXTS.items():
            for column in columns:
                op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    if _has_lz4():
        for table, columns in LONG_TEXTS.items():
            for column in columns:
                op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION pglz")
    op.execute("DROP INDEX ix_task_search_unindexed")
    op.execute("ALTER TABLE task_search DROP COLUMN tsv")
    op.execute("ALTER TABLE task_search ADD COLUMN tsv tsvector "
                "GENERATED ALWAYS AS (to_tsvector('english', body)) STORED")
    op.execute("CREATE INDEX ix_task_search_tsv ON task_search USING gin (tsv)")
