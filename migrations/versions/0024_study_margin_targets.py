"""a study states its equivalence margin and, per endpoint, the half-width at which it may stop

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-26 06:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0024'
down_revision: str | None = '0023'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Studies made before this were judged against the fixed margin of 0.05, and had no targets.
    op.add_column('study', sa.Column('margin', sa.Float(), nullable=False, server_default='0.05'))
    op.add_column('study', sa.Column('targets', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('study') as batch:
        batch.drop_column('targets')
        batch.drop_column('margin')
