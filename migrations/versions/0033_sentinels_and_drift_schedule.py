"""sentinel sets (a reference drawn from several locked studies) and scheduled drift checks

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-26 15:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0033'
down_revision: str | None = '0032'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'sentinel_set',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('per_study', sa.Integer(), nullable=True),
        sa.Column('seed', sa.Integer(), nullable=False),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['created_by'], ['app_user.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('name'),
    )
    op.create_table(
        'sentinel_item',
        sa.Column('sentinel_id', sa.Integer(), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['item_id'], ['study_item.id']),
        sa.ForeignKeyConstraint(['sentinel_id'], ['sentinel_set.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('sentinel_id', 'item_id'),
    )
    op.create_index('ix_sentinel_item_study_id', 'sentinel_item', ['study_id'])
    op.create_table(
        'drift_schedule',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=True),
        sa.Column('sentinel_id', sa.Integer(), nullable=True),
        sa.Column('every_hours', sa.Integer(), nullable=False),
        sa.Column('next_at', sa.DateTime(), nullable=False),
        sa.Column('last_job_id', sa.Integer(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['created_by'], ['app_user.id']),
        sa.ForeignKeyConstraint(['sentinel_id'], ['sentinel_set.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('id'),
    )


def downgrade() -> None:
    op.drop_table('drift_schedule')
    op.drop_index('ix_sentinel_item_study_id', table_name='sentinel_item')
    op.drop_table('sentinel_item')
    op.drop_table('sentinel_set')
