"""an index of the edits whose pixels are not digested yet, so the pairwise form's data
version counts them from a small index instead of the whole metrics table

Revision ID: 0039
Revises: 0038
Create Date: 2026-11-27 17:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0039'
down_revision: str | None = '0038'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNDIGESTED = sa.text("pixels_sha256 IS NULL AND error IS NULL")


def upgrade() -> None:
    # Partial: empty once the metrics worker has read every edit, so counting it is free.
    op.create_index('ix_attempt_metric_undigested', 'attempt_metric', ['attempt_id'],
                    sqlite_where=UNDIGESTED, postgresql_where=UNDIGESTED)


def downgrade() -> None:
    op.drop_index('ix_attempt_metric_undigested', table_name='attempt_metric')
