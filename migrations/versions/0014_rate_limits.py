"""rate limits shared by every job and worker: a lock row per model and a sliding window
of the calls let through

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 14:30:00

--per-minute once limited the start of tasks in one job: 30 a minute gave 281 calls a
minute, and two jobs or two workers each had their own limit.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('rate_limit', sa.Column('model', sa.String(length=100), primary_key=True))
    op.create_table(
        'rate_call',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('model', sa.String(length=100), nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
    )
    op.create_index('ix_rate_call_model_at', 'rate_call', ['model', 'at'])


def downgrade() -> None:
    op.drop_index('ix_rate_call_model_at', table_name='rate_call')
    op.drop_table('rate_call')
    op.drop_table('rate_limit')
