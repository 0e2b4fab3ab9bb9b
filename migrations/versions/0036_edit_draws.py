"""an adaptive study's draw may be one judged edit, not a whole source image

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-27 13:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0036'
down_revision: str | None = '0035'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('study_draw') as batch:
        batch.add_column(sa.Column('attempt_id', sa.Integer(), nullable=True))
        batch.create_foreign_key('fk_study_draw_attempt_id_attempt', 'attempt', ['attempt_id'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('study_draw') as batch:
        batch.drop_constraint('fk_study_draw_attempt_id_attempt', type_='foreignkey')
        batch.drop_column('attempt_id')
