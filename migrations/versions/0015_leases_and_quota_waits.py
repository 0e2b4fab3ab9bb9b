"""a fencing token on every job claim, the moment a job waits for quota until, and the
tokens each limited call used

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23 14:40:00

A worker paused long enough to lose its job to another once came back and overwrote the
other's round images. Each claim now raises the job's lease, and every write of a job checks
that the lease is still the one it claimed with.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('job') as batch:
        batch.add_column(sa.Column('lease', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('waiting_until', sa.DateTime(), nullable=True))
    with op.batch_alter_table('rate_call') as batch:
        batch.add_column(sa.Column('tokens', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('rate_call') as batch:
        batch.drop_column('tokens')
    with op.batch_alter_table('job') as batch:
        batch.drop_column('waiting_until')
        batch.drop_column('lease')
