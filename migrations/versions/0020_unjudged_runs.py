"""runs that were never judged get their own outcome, "unjudged": a failed run none of whose
rounds has a verdict the judge gave, told from runs the judge rejected; and a job counts them

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26 03:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0020'
down_revision: str | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A verdict the judge gave: read without an error, with an accept or reject in it.
JUDGED = ("EXISTS (SELECT 1 FROM attempt JOIN judge_verdict ON judge_verdict.attempt_id = attempt.id "
          "WHERE attempt.run_id = run.id AND judge_verdict.error IS NULL "
          "AND judge_verdict.qualified IS NOT NULL)")


def upgrade() -> None:
    op.add_column('job', sa.Column('unjudged', sa.Integer(), nullable=False, server_default='0'))
    op.execute(f"UPDATE run SET outcome = 'unjudged' WHERE outcome = 'failed' AND NOT {JUDGED}")
    op.execute("UPDATE task SET outcome = 'unjudged' WHERE outcome = 'failed' AND latest_run_id IN "
               "(SELECT id FROM run WHERE outcome = 'unjudged')")


def downgrade() -> None:
    op.execute("UPDATE task SET outcome = 'failed' WHERE outcome = 'unjudged'")
    op.execute("UPDATE run SET outcome = 'failed' WHERE outcome = 'unjudged'")
    with op.batch_alter_table('job') as batch:
        batch.drop_column('unjudged')
