"""practice studies, a study's required qualification, and who qualified

Revision ID: 0038
Revises: 0037
Create Date: 2026-11-27 15:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0038'
down_revision: str | None = '0037'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('study', sa.Column('practice', sa.Boolean(), server_default=sa.false(),
                                     nullable=False))
    op.add_column('study', sa.Column('qualification', sa.Text(), nullable=True))
    op.create_table(
        'qualification',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('practice_id', sa.Integer(), nullable=False),
        sa.Column('cases', sa.Integer(), nullable=False),
        sa.Column('right', sa.Integer(), nullable=False),
        sa.Column('asked', sa.Integer(), nullable=False),
        sa.Column('low', sa.Float(), nullable=False),
        sa.Column('high', sa.Float(), nullable=False),
        sa.Column('threshold', sa.Float(), nullable=False),
        sa.Column('min_cases', sa.Integer(), nullable=False),
        sa.Column('on', sa.String(length=16), nullable=False),
        sa.Column('qualified_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['practice_id'], ['study.id']),
        sa.ForeignKeyConstraint(['user_id'], ['app_user.id']),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('ix_qualification_user_id', 'qualification', ['user_id'])
    op.create_index('ix_qualification_practice_id', 'qualification', ['practice_id'])


def downgrade() -> None:
    op.drop_index('ix_qualification_practice_id', 'qualification')
    op.drop_index('ix_qualification_user_id', 'qualification')
    op.drop_table('qualification')
    with op.batch_alter_table('study') as batch:
        batch.drop_column('qualification')
        batch.drop_column('practice')
