"""accounts deactivated, never deleted; a session nonce per user; named, expiring, revocable
tokens; login throttling; worker heartbeats

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 12:00:00

A copied cookie of a deleted user once signed in as the next new user (SQLite reuses the
highest rowid). Users and tokens are now never deleted (triggers refuse it), and a cookie
must carry its user's current session nonce, which logout and a password change replace.
Tokens issued before this revision expire 90 days after they were made.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEVER_DELETED = ("app_user", "api_token")


def upgrade() -> None:
    # Plain ALTER TABLE (no batch copy): app_user is referenced by studies and answers.
    op.add_column('app_user', sa.Column('active', sa.Boolean(), nullable=False,
                                        server_default=sa.true()))
    op.add_column('app_user', sa.Column('deactivated_at', sa.DateTime(), nullable=True))
    # Existing rows get a nonce below; new rows get theirs from the model.
    op.add_column('app_user', sa.Column('session_nonce', sa.String(length=32), nullable=False,
                                        server_default=''))
    op.add_column('api_token', sa.Column('name', sa.String(length=64), nullable=False,
                                         server_default=''))
    op.add_column('api_token', sa.Column('expires_at', sa.DateTime(), nullable=True))
    op.add_column('api_token', sa.Column('last_used_at', sa.DateTime(), nullable=True))
    op.add_column('api_token', sa.Column('revoked_at', sa.DateTime(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        op.execute("UPDATE app_user SET session_nonce = lower(hex(randomblob(16)))")
        op.execute("UPDATE api_token SET expires_at = datetime(created_at, '+90 days')")
        for table in NEVER_DELETED:
            op.execute(f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
                       f"BEGIN SELECT RAISE(ABORT, '{table} rows are deactivated or revoked, "
                       "never deleted'); END")
    else:
        op.execute("UPDATE app_user SET session_nonce = md5(random()::text || id::text)")
        op.execute("UPDATE api_token SET expires_at = created_at + interval '90 days'")
        op.execute("CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ "
                   "BEGIN RAISE EXCEPTION '% rows are deactivated or revoked, never deleted', "
                   "TG_TABLE_NAME; END $$")
        for table in NEVER_DELETED:
            op.execute(f"CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION refuse_delete()")
    op.create_table(
        'login_throttle',
        sa.Column('key', sa.String(length=200), primary_key=True),
        sa.Column('failures', sa.Integer(), nullable=False),
        sa.Column('window_start', sa.DateTime(), nullable=False),
        sa.Column('locked_until', sa.DateTime(), nullable=True),
    )
    op.create_table(
        'worker_heartbeat',
        sa.Column('worker_id', sa.String(length=64), primary_key=True),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=False),
        sa.Column('beat_at', sa.DateTime(), nullable=False),
    )
    op.create_index('ix_worker_heartbeat_beat_at', 'worker_heartbeat', ['beat_at'])


def downgrade() -> None:
    op.drop_index('ix_worker_heartbeat_beat_at', table_name='worker_heartbeat')
    op.drop_table('worker_heartbeat')
    op.drop_table('login_throttle')
    for table in NEVER_DELETED:
        op.execute(f"DROP TRIGGER {table}_never_deleted" + (
            "" if op.get_bind().dialect.name == "sqlite" else f" ON {table}"))
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION refuse_delete()")
    with op.batch_alter_table('api_token', schema=None) as batch_op:
        for column in ('revoked_at', 'last_used_at', 'expires_at', 'name'):
            batch_op.drop_column(column)
    with op.batch_alter_table('app_user', schema=None) as batch_op:
        for column in ('session_nonce', 'deactivated_at', 'active'):
            batch_op.drop_column(column)
