"""real-or-edited studies: which image each item shows, and the readers' real/edited answers

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25 17:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every item made before shows its edit.
    op.add_column('study_item', sa.Column('shows', sa.String(length=8), nullable=False,
                                          server_default='edit'))
    op.create_table(
        'real_or_edited_answer',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('assignment_id', sa.Integer(), sa.ForeignKey('assignment.id'), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('submission_id', sa.String(length=64), nullable=False, unique=True),
        sa.Column('edited', sa.Boolean(), nullable=False),
        sa.Column('confidence', sa.Integer(), nullable=False),
        sa.Column('click_x', sa.Float(), nullable=True),
        sa.Column('click_y', sa.Float(), nullable=True),
        sa.Column('time_on_case_ms', sa.Integer(), nullable=True),
        sa.Column('retracted', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.UniqueConstraint('assignment_id', 'version'),
    )
    op.create_index('ix_real_or_edited_answer_assignment_id', 'real_or_edited_answer',
                    ['assignment_id'])


def downgrade() -> None:
    op.drop_index('ix_real_or_edited_answer_assignment_id', table_name='real_or_edited_answer')
    op.drop_table('real_or_edited_answer')
    with op.batch_alter_table('study_item') as batch:
        batch.drop_column('shows')
