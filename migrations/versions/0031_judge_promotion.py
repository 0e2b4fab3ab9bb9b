"""the promoted judge: which candidate judges new regeneration jobs, and which candidate
gave each verdict (NULL: the judge of record's own prompt)

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-26 14:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0031'
down_revision: str | None = '0030'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'judge_promotion',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('candidate_id', sa.Integer(), nullable=True),
        sa.Column('promoted_by', sa.Integer(), nullable=True),
        sa.Column('promoted_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['candidate_id'], ['judge_candidate.id']),
        sa.ForeignKeyConstraint(['promoted_by'], ['app_user.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('judge_verdict', schema=None) as batch_op:
        batch_op.add_column(sa.Column('candidate_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('judge_verdict', schema=None) as batch_op:
        batch_op.drop_column('candidate_id')
    op.drop_table('judge_promotion')
