"""the instances a DICOMweb server acknowledged, so a retry sends only the rest

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-05 09:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0044'
down_revision: str | None = '0043'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'dicom_sent',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('server', sa.String(length=500), nullable=False),
        sa.Column('sop_instance_uid', sa.String(length=64), nullable=False),
        sa.Column('job_id', sa.Integer(), nullable=True),
        sa.Column('sent_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('server', 'sop_instance_uid'),
    )


def downgrade() -> None:
    op.drop_table('dicom_sent')
