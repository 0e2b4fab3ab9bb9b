"""an index on task.latest_run_id: the judged-edit pool joins every attempt to its task's
latest run, and SQLite built an automatic index for it on every such query

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-26 07:05:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0026'
down_revision: str | None = '0025'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f('ix_task_latest_run_id'), 'task', ['latest_run_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_task_latest_run_id'), table_name='task')
