"""judge panels: a candidate made of other candidates, with its aggregation rule

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-26 15:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0032'
down_revision: str | None = '0031'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('judge_candidate', schema=None) as batch_op:
        batch_op.add_column(sa.Column('members', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('rule', sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('judge_candidate', schema=None) as batch_op:
        batch_op.drop_column('rule')
        batch_op.drop_column('members')
