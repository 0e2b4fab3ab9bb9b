"""blinding: a secret order per study, a uid per read, a reader's instruction per item,
answers flagged when given after the judge was revealed, and instructions that can be hidden

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 13:00:00

Readers could rebuild their own case order from the study's seed and their user id (which a
signed, unencrypted cookie shows), recognise repeats by a reused image uid, and tell later
rounds by their longer instructions. Existing studies keep their orders; their reads get
fresh uids, and their items fall back to a reader's instruction computed when first shown.
"""
import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('study', sa.Column('order_secret', sa.String(length=64), nullable=False,
                                     server_default=''))
    op.add_column('study', sa.Column('show_instructions', sa.Boolean(), nullable=False,
                                     server_default=sa.true()))
    op.add_column('study_item', sa.Column('reader_instruction', sa.Text(), nullable=True))
    op.add_column('answer', sa.Column('after_reveal', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    # NOT NULL with a placeholder, filled below, then unique: no table copy (answers and
    # drafts refer to assignments).
    op.add_column('assignment', sa.Column('uid', sa.String(length=32), nullable=False,
                                          server_default=''))
    bind = op.get_bind()
    studies = sa.table('study', sa.column('id', sa.Integer), sa.column('order_secret', sa.String))
    for (study_id,) in bind.execute(sa.select(studies.c.id)).all():
        bind.execute(studies.update().where(studies.c.id == study_id)
                     .values(order_secret=secrets.token_hex(16)))
    reads = sa.table('assignment', sa.column('id', sa.Integer), sa.column('uid', sa.String))
    for (read_id,) in bind.execute(sa.select(reads.c.id)).all():
        bind.execute(reads.update().where(reads.c.id == read_id).values(uid=secrets.token_hex(12)))
    op.create_index('ix_assignment_uid', 'assignment', ['uid'], unique=True)


def downgrade() -> None:
    op.drop_index('ix_assignment_uid', table_name='assignment')
    op.drop_column('assignment', 'uid')
    op.drop_column('answer', 'after_reveal')
    op.drop_column('study_item', 'reader_instruction')
    op.drop_column('study', 'show_instructions')
    op.drop_column('study', 'order_secret')
