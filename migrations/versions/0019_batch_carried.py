"""what each batch request carried (a fingerprint of its images and texts), so that a batch's
answer is never stored with inputs a restart made again

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 03:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batches recorded before carry no fingerprint: their answers are asked again rather
    # than trusted (app/jobs/batch_steps.py).
    with op.batch_alter_table('job_batch') as batch:
        batch.add_column(sa.Column('carried', sa.Text(), nullable=False, server_default='{}'))


def downgrade() -> None:
    with op.batch_alter_table('job_batch') as batch:
        batch.drop_column('carried')
