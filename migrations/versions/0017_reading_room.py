"""the reading room: a study's instructions and viewer tools, each answer's tool use, a
reader's board certification, and the accounts audit log

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-23 18:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVERY_TOOL = '["window", "flicker", "swipe", "difference"]'


def upgrade() -> None:
    # Plain ADD COLUMN: a batch copy of these tables would trip the rows that refer to them.
    op.add_column('study', sa.Column('instructions', sa.Text(), nullable=True))
    # Studies made before keep the tools their readers had.
    op.add_column('study', sa.Column('viewer_tools', sa.String(length=200), nullable=False,
                                     server_default=EVERY_TOOL))
    op.add_column('answer', sa.Column('tool_use', sa.Text(), nullable=True))
    op.add_column('app_user', sa.Column('board_certified', sa.Boolean(), nullable=True))
    op.create_table(
        'audit_event',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.Column('actor_id', sa.Integer(), sa.ForeignKey('app_user.id'), nullable=True),
        sa.Column('action', sa.String(length=40), nullable=False),
        sa.Column('subject_id', sa.Integer(), sa.ForeignKey('app_user.id'), nullable=True),
        sa.Column('detail', sa.Text(), nullable=False),
    )
    op.create_index('ix_audit_event_at', 'audit_event', ['at'])
    op.create_index('ix_audit_event_subject_id', 'audit_event', ['subject_id'])


def downgrade() -> None:
    op.drop_index('ix_audit_event_subject_id', table_name='audit_event')
    op.drop_index('ix_audit_event_at', table_name='audit_event')
    op.drop_table('audit_event')
    with op.batch_alter_table('app_user') as batch:
        batch.drop_column('board_certified')
    with op.batch_alter_table('answer') as batch:
        batch.drop_column('tool_use')
    with op.batch_alter_table('study') as batch:
        batch.drop_column('viewer_tools')
        batch.drop_column('instructions')
