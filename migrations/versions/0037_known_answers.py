"""known-answer cases: settled answers, the study items drawn for them, and reader pauses

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-27 14:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0037'
down_revision: str | None = '0036'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'known_answer',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('attempt_id', sa.Integer(), nullable=False),
        sa.Column('answers', sa.Text(), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=True),
        sa.Column('marked_by', sa.Integer(), nullable=True),
        sa.Column('note', sa.Text(), server_default='', nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('retired_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['attempt_id'], ['attempt.id']),
        sa.ForeignKeyConstraint(['marked_by'], ['app_user.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('ix_known_answer_attempt_id', 'known_answer', ['attempt_id'])
    op.create_index('ix_known_answer_study_id', 'known_answer', ['study_id'])
    op.create_table(
        'reader_pause',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('cause', sa.String(length=16), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('statistic', sa.Float(), nullable=False),
        sa.Column('threshold', sa.Float(), nullable=False),
        sa.Column('cases', sa.Integer(), nullable=False),
        sa.Column('paused_at', sa.DateTime(), nullable=False),
        sa.Column('resumed_at', sa.DateTime(), nullable=True),
        sa.Column('resumed_by', sa.Integer(), nullable=True),
        sa.Column('resume_note', sa.Text(), server_default='', nullable=False),
        sa.ForeignKeyConstraint(['resumed_by'], ['app_user.id']),
        sa.ForeignKeyConstraint(['study_id'], ['study.id']),
        sa.ForeignKeyConstraint(['user_id'], ['app_user.id']),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('ix_reader_pause_study_id', 'reader_pause', ['study_id'])
    op.create_index('ix_reader_pause_user_id', 'reader_pause', ['user_id'])
    # Plain ALTER TABLE, never a batch copy: SQLite cannot drop study_item, which answers
    # and assignments reference, to swap in a copy while foreign keys are enforced (as 0010).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE study_item ADD COLUMN known_answer_id INTEGER "
                   "REFERENCES known_answer (id)")
    else:
        op.add_column('study_item', sa.Column('known_answer_id', sa.Integer(), nullable=True))
        op.create_foreign_key('fk_study_item_known_answer_id_known_answer', 'study_item',
                              'known_answer', ['known_answer_id'], ['id'])
    op.create_index('ix_study_item_known_answer_id', 'study_item', ['known_answer_id'])


def downgrade() -> None:
    op.drop_index('ix_study_item_known_answer_id', 'study_item')
    if op.get_bind().dialect.name != "sqlite":  # SQLite's column-level reference has no name
        op.drop_constraint('fk_study_item_known_answer_id_known_answer', 'study_item',
                           type_='foreignkey')
    with op.batch_alter_table('study_item') as batch:
        batch.drop_column('known_answer_id')
    op.drop_index('ix_reader_pause_user_id', 'reader_pause')
    op.drop_index('ix_reader_pause_study_id', 'reader_pause')
    op.drop_table('reader_pause')
    op.drop_index('ix_known_answer_study_id', 'known_answer')
    op.drop_index('ix_known_answer_attempt_id', 'known_answer')
    op.drop_table('known_answer')
