"""an adaptive study's batches (with the state each was drawn from) and its draws (which
source image, at what probability)

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-26 06:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0025'
down_revision: str | None = '0024'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'study_batch',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('batch', sa.Integer(), nullable=False),
        sa.Column('state', sa.Text(), nullable=False),
        sa.Column('bound', sa.Float(), nullable=False),
        sa.Column('ready', sa.Boolean(), nullable=False),
        sa.Column('drawn_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('study_id', 'batch'),
    )
    op.create_index(op.f('ix_study_batch_study_id'), 'study_batch', ['study_id'])
    op.create_table(
        'study_draw',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('batch', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('source_image_id', sa.Integer(), nullable=False),
        sa.Column('probability', sa.Float(), nullable=False),
        sa.Column('pool_images', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['source_image_id'], ['source_image.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('study_id', 'batch', 'position'),
    )
    op.create_index(op.f('ix_study_draw_study_id'), 'study_draw', ['study_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_study_draw_study_id'), table_name='study_draw')
    op.drop_table('study_draw')
    op.drop_index(op.f('ix_study_batch_study_id'), table_name='study_batch')
    op.drop_table('study_batch')
