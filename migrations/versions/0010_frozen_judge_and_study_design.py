"""frozen judge verdict per study item, study design (replacing include_failed_rounds) and
primary question, reader qualification

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 09:00:00

Existing studies were made before the judge was frozen: each item gets its attempt's verdict
of record (the first one stored, the one the pipeline acted on), which is what their figures
should always have used; a later re-judgement then stays out of them.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ALTER TABLE, never a batch copy: the tables already hold studies whose answers
    # and assignments reference them, and SQLite cannot drop a referenced table to swap in a
    # copy while foreign keys are enforced (tests/test_migrations.py upgrades such a database).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE study_item ADD COLUMN judge_verdict_id INTEGER "
                   "REFERENCES judge_verdict (id)")
    else:
        op.add_column('study_item', sa.Column('judge_verdict_id', sa.Integer(), nullable=True))
        op.create_foreign_key('fk_study_item_judge_verdict', 'study_item', 'judge_verdict',
                              ['judge_verdict_id'], ['id'])
    # The server defaults fill the rows already there (the models supply values from now on).
    op.add_column('study', sa.Column('design', sa.String(length=16), nullable=False,
                                     server_default='accepted'))
    op.add_column('study', sa.Column('primary_question', sa.String(length=16), nullable=False,
                                     server_default='overall'))
    op.add_column('study', sa.Column('plan', sa.Text(), nullable=True))
    op.add_column('app_user', sa.Column('qualification', sa.Text(), nullable=True))
    op.add_column('app_user', sa.Column('experience_years', sa.Integer(), nullable=True))
    op.execute("UPDATE study SET design = 'runs' WHERE include_failed_rounds")
    op.execute("""
        UPDATE study_item SET judge_verdict_id = (
            SELECT min(judge_verdict.id) FROM judge_verdict
            WHERE judge_verdict.attempt_id = study_item.attempt_id)
    """)
    # One name for the idea: the design says whether failed rounds are read.
    op.drop_column('study', 'include_failed_rounds')


def downgrade() -> None:
    with op.batch_alter_table('app_user', schema=None) as batch_op:
        batch_op.drop_column('experience_years')
        batch_op.drop_column('qualification')
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.add_column(sa.Column('include_failed_rounds', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.execute("UPDATE study SET include_failed_rounds = (design = 'runs')")
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.alter_column('include_failed_rounds', server_default=None)
        batch_op.drop_column('plan')
        batch_op.drop_column('primary_question')
        batch_op.drop_column('design')
    with op.batch_alter_table('study_item', schema=None) as batch_op:
        batch_op.drop_constraint('fk_study_item_judge_verdict', type_='foreignkey')
        batch_op.drop_column('judge_verdict_id')
