"""candidate judges and their verdicts on a reference study's edits (app/judges)

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-26 14:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0030'
down_revision: str | None = '0029'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'judge_candidate',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('backend', sa.String(length=16), nullable=False),
        sa.Column('model', sa.String(length=100), nullable=False),
        sa.Column('template', sa.Text(), nullable=False),
        sa.Column('version', sa.String(length=12), nullable=False),
        sa.Column('rubric_version', sa.String(length=12), nullable=False),
        sa.Column('thinking_budget', sa.Integer(), nullable=True),
        sa.Column('temperature', sa.Float(), nullable=True),
        sa.Column('repeats', sa.Integer(), nullable=False),
        sa.Column('bias', sa.String(length=16), nullable=True),
        sa.Column('note', sa.Text(), server_default='', nullable=False),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['created_by'], ['app_user.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('name'),
    )
    op.create_table(
        'candidate_verdict',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('candidate_id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('repeat', sa.Integer(), nullable=False),
        sa.Column('original_first', sa.Boolean(), nullable=False),
        sa.Column('compliance', sa.Boolean(), nullable=True),
        sa.Column('structure', sa.Boolean(), nullable=True),
        sa.Column('realism', sa.Boolean(), nullable=True),
        sa.Column('fidelity', sa.Boolean(), nullable=True),
        sa.Column('qualified', sa.Boolean(), nullable=True),
        sa.Column('has_disease', sa.Boolean(), nullable=True),
        sa.Column('weighted_score', sa.Float(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('spec_version', sa.String(length=12), nullable=False),
        sa.Column('model_version', sa.String(length=100), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['candidate_id'], ['judge_candidate.id']),
        sa.ForeignKeyConstraint(['item_id'], ['study_item.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('candidate_id', 'item_id', 'repeat', 'original_first'),
    )
    op.create_index(op.f('ix_candidate_verdict_candidate_id'), 'candidate_verdict', ['candidate_id'])
    op.create_index(op.f('ix_candidate_verdict_study_id'), 'candidate_verdict', ['study_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_candidate_verdict_study_id'), table_name='candidate_verdict')
    op.drop_index(op.f('ix_candidate_verdict_candidate_id'), table_name='candidate_verdict')
    op.drop_table('candidate_verdict')
    op.drop_table('judge_candidate')
