"""blocked runs: a job counts the runs the API refused (a safety or content block) apart from
rejected edits and failed calls

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 14:00:00

Run outcomes are text, so the new outcome "blocked" needs no change to the run table.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('job', sa.Column('blocked', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    op.drop_column('job', 'blocked')
