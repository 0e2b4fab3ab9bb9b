"""a study opens to its readers once every image they will be shown is drawn: whether that is
done, and how far it got

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-26 04:45:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0023'
down_revision: str | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Studies made before this drew their images after the fact; they stay open.
    op.add_column('study', sa.Column('images_ready', sa.Boolean(), nullable=False,
                                     server_default=sa.true()))
    op.add_column('study', sa.Column('images_drawn', sa.Integer(), nullable=False,
                                     server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('study') as batch:
        batch.drop_column('images_drawn')
        batch.drop_column('images_ready')
