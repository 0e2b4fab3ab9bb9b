"""the decoded pixels' digest of each measured edit, so identical pairs leave pairwise pools

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-27 12:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0035'
down_revision: str | None = '0034'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows measured before this revision get their digest from the metrics worker's backfill.
    with op.batch_alter_table('attempt_metric') as batch:
        batch.add_column(sa.Column('pixels_sha256', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('attempt_metric') as batch:
        batch.drop_column('pixels_sha256')
