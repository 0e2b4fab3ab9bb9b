"""pairwise studies: the other edit of each pair, and the readers' answers

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-26 16:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0034'
down_revision: str | None = '0033'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'study_pair',
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('first_attempt_id', sa.Integer(), nullable=False),
        sa.Column('first_verdict_id', sa.Integer(), nullable=True),
        sa.Column('first_run_id', sa.Integer(), nullable=False),
        sa.Column('second_run_id', sa.Integer(), nullable=False),
        sa.Column('first_round', sa.Integer(), nullable=False),
        sa.Column('second_round', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['first_attempt_id'], ['attempt.id']),
        sa.ForeignKeyConstraint(['first_run_id'], ['run.id']),
        sa.ForeignKeyConstraint(['first_verdict_id'], ['judge_verdict.id']),
        sa.ForeignKeyConstraint(['item_id'], ['study_item.id']),
        sa.ForeignKeyConstraint(['second_run_id'], ['run.id']),
        sa.PrimaryKeyConstraint('item_id'),
    )
    op.create_table(
        'pair_answer',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('assignment_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('submission_id', sa.String(length=64), nullable=False),
        sa.Column('choice', sa.String(length=8), nullable=False),
        sa.Column('first_left', sa.Boolean(), nullable=False),
        sa.Column('confidence', sa.Integer(), nullable=False),
        sa.Column('tags', sa.Text(), nullable=False),
        sa.Column('comment', sa.Text(), nullable=False),
        sa.Column('time_on_case_ms', sa.Integer(), nullable=True),
        sa.Column('tool_use', sa.Text(), nullable=True),
        sa.Column('retracted', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['assignment_id'], ['assignment.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('assignment_id', 'version'),
        sa.UniqueConstraint('submission_id'),
    )
    op.create_index('ix_pair_answer_assignment_id', 'pair_answer', ['assignment_id'])


def downgrade() -> None:
    op.drop_index('ix_pair_answer_assignment_id', table_name='pair_answer')
    op.drop_table('pair_answer')
    op.drop_table('study_pair')
