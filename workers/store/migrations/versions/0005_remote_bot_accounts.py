"""remote bots: bot accounts, their API keys (hashed), and a block's wait for a remote bot

- ``bot_accounts``: an author's account, which plays in leagues as the bot ``remote/NAME``;
- ``api_keys``: each key's public id, the SHA-256 of the key (never the key), its limits on
  connections and concurrent matches, and when it was revoked;
- ``blocks`` gains ``waiting``: what a claimed block waits for (a remote bot to connect), for
  ``league status``.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_bot_accounts_bot_id_bots")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bot_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_bot_accounts_name")),
        sa.UniqueConstraint("bot_id", name=op.f("uq_bot_accounts_bot_id")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("max_connections", sa.Integer(), nullable=False),
        sa.Column("max_matches", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["bot_accounts.id"], name=op.f("fk_api_keys_account_id_bot_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_id", name=op.f("uq_api_keys_key_id")),
        sa.UniqueConstraint("sha256", name=op.f("uq_api_keys_sha256")),
    )
    op.create_index(op.f("ix_api_keys_account_id"), "api_keys", ["account_id"])
    with op.batch_alter_table("blocks") as batch:
        batch.add_column(sa.Column("waiting", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("blocks") as batch:
        batch.drop_column("waiting")
    op.drop_index(op.f("ix_api_keys_account_id"), table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("bot_accounts")
