"""each draft's edition: the reading screen numbers its saves, and a save that arrives after
a newer one (still in flight when the reader changed the form again or left the page) is
refused instead of overwriting it

Revision ID: 0041
Revises: 0040
Create Date: 2026-11-27 23:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0041'
down_revision: str | None = '0040'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('draft') as batch:
        batch.add_column(sa.Column('edition', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('draft') as batch:
        batch.drop_column('edition')
