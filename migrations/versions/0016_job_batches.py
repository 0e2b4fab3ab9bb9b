"""the Batch API's batches of a job: one row per batch submitted, so a restarted worker
resumes polling and never submits the same calls twice

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-23 15:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'job_batch',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('job_id', sa.Integer(), sa.ForeignKey('job.id'), nullable=False),
        sa.Column('wave', sa.Integer(), nullable=False),
        sa.Column('step', sa.String(length=16), nullable=False),
        sa.Column('part', sa.Integer(), nullable=False),
        sa.Column('model', sa.String(length=100), nullable=False),
        sa.Column('display_name', sa.String(length=128), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=True),
        sa.Column('state', sa.String(length=40), nullable=False),
        sa.Column('keys', sa.Text(), nullable=False),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.UniqueConstraint('job_id', 'wave', 'step', 'part'),
        sa.UniqueConstraint('display_name'),
    )
    op.create_index('ix_job_batch_job_id', 'job_batch', ['job_id'])


def downgrade() -> None:
    op.drop_index('ix_job_batch_job_id', table_name='job_batch')
    op.drop_table('job_batch')
