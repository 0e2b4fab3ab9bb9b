"""a quota's call counts while it is in flight, then from when its answer came back, so that a
quota set equal to the service's draws no 429

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26 04:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0021'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('rate_call', sa.Column('in_flight', sa.Boolean(), nullable=False,
                                         server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('rate_call') as batch:
        batch.drop_column('in_flight')
