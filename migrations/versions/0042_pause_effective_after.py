"""a pause holds after a random few further reads: the paused screen must not point at the
known-answer case whose answer fired the test

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-04 19:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0042'
down_revision: str | None = '0041'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('reader_pause') as batch:
        batch.add_column(sa.Column('effective_after', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('reader_pause') as batch:
        batch.drop_column('effective_after')
