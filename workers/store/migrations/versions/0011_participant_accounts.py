"""participant accounts own bots; submissions through the API

- ``bot_accounts.display_name``: the name a participant's pages show (NULL: the account's name).
- ``bot_owners``: which account owns a bot (a bot without a row is the platform's: the operator's
  submissions and the reference bots). Every existing bot account becomes a participant account
  that owns its remote bot ``remote/NAME``.
- ``active_versions``: the versions an account has chosen to be active.
- ``submissions``: every upload through the API (``sixnimmt api serve``) and its validation:
  pending, valid (naming the stored version), invalid (with the check's report) or refused.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def _created() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now())


def upgrade() -> None:
    with op.batch_alter_table("bot_accounts") as batch:
        batch.add_column(sa.Column("display_name", sa.String(100), nullable=True))
    op.create_table(
        "bot_owners",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        _created(),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name="fk_bot_owners_bot_id_bots"),
        sa.ForeignKeyConstraint(
            ["account_id"], ["bot_accounts.id"], name="fk_bot_owners_account_id_bot_accounts"
        ),
        sa.PrimaryKeyConstraint("bot_id", name="pk_bot_owners"),
    )
    op.create_index("ix_bot_owners_account_id", "bot_owners", ["account_id"])
    op.create_table(
        "active_versions",
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        _created(),
        sa.ForeignKeyConstraint(
            ["bot_version_id"], ["bot_versions.id"], name="fk_active_versions_bot_version_id_bot_versions"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["bot_accounts.id"], name="fk_active_versions_account_id_bot_accounts"
        ),
        sa.PrimaryKeyConstraint("bot_version_id", name="pk_active_versions"),
    )
    op.create_index("ix_active_versions_account_id", "active_versions", ["account_id"])
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("bot", sa.String(100), nullable=False),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=True),
        sa.Column("entry_point", sa.String(300), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("report", sa.JSON(), nullable=True),
        sa.Column("transcript", sa.Text(), nullable=True),
        sa.Column("bot_version_id", sa.Integer(), nullable=True),
        _created(),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["bot_accounts.id"], name="fk_submissions_account_id_bot_accounts"
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"], ["bot_versions.id"], name="fk_submissions_bot_version_id_bot_versions"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_submissions"),
    )
    op.create_index("ix_submissions_account_id_created_at", "submissions", ["account_id", "created_at"])
    # Every remote-bot account owns its remote bot.
    op.execute(
        "INSERT INTO bot_owners (bot_id, account_id, created_at)"
        " SELECT bot_id, id, created_at FROM bot_accounts"
    )


def downgrade() -> None:
    op.drop_index("ix_submissions_account_id_created_at", table_name="submissions")
    op.drop_table("submissions")
    op.drop_index("ix_active_versions_account_id", table_name="active_versions")
    op.drop_table("active_versions")
    op.drop_index("ix_bot_owners_account_id", table_name="bot_owners")
    op.drop_table("bot_owners")
    with op.batch_alter_table("bot_accounts") as batch:
        batch.drop_column("display_name")
