"""the study instructions each reader was last shown, so that a reader sees them on their
first case and again whenever they changed

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-26 04:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0022'
down_revision: str | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('study_reader', sa.Column('instructions_seen', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('study_reader') as batch:
        batch.drop_column('instructions_seen')
