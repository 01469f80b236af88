"""competitions

- ``competitions``: a competition's settings (variant, table size, quotas, end, final), its state
  (season, final, finished) and its two leagues (the season's ladder, the final's adaptive league).
- ``competition_entries``: the accounts that entered a competition.
- ``submissions.archive``: the uploaded archive, kept while the submission is pending so that a
  worker can validate it; ``submissions.competition_id``: the competition it was made for.

Existing stores gain two empty tables and two NULL columns; nothing else changes.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def _created() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now())


def upgrade() -> None:
    op.create_table(
        "competitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("table_size", sa.Integer(), nullable=False),
        sa.Column("submissions_per_day", sa.Integer(), nullable=False),
        sa.Column("active_per_account", sa.Integer(), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("final_top", sa.Integer(), nullable=False),
        sa.Column("final_until_confident", sa.Float(), nullable=False),
        sa.Column("final_max_deals", sa.Integer(), nullable=False),
        sa.Column("season_rule", sa.JSON(), nullable=True),
        sa.Column("state", sa.String(10), nullable=False, server_default="season"),
        sa.Column("season_league_id", sa.Integer(), nullable=True),
        sa.Column("final_league_id", sa.Integer(), nullable=True),
        _created(),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["season_league_id"], ["leagues.id"], name="fk_competitions_season_league_id_leagues"
        ),
        sa.ForeignKeyConstraint(
            ["final_league_id"], ["leagues.id"], name="fk_competitions_final_league_id_leagues"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_competitions"),
        sa.UniqueConstraint("name", name="uq_competitions_name"),
    )
    op.create_table(
        "competition_entries",
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        _created(),
        sa.ForeignKeyConstraint(
            ["competition_id"],
            ["competitions.id"],
            name="fk_competition_entries_competition_id_competitions",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["bot_accounts.id"], name="fk_competition_entries_account_id_bot_accounts"
        ),
        sa.PrimaryKeyConstraint("competition_id", "account_id", name="pk_competition_entries"),
    )
    op.create_index("ix_competition_entries_account_id", "competition_entries", ["account_id"])
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("archive", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("competition_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_submissions_competition_id_competitions", "competitions", ["competition_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("fk_submissions_competition_id_competitions", type_="foreignkey")
        batch.drop_column("competition_id")
        batch.drop_column("archive")
    op.drop_index("ix_competition_entries_account_id", table_name="competition_entries")
    op.drop_table("competition_entries")
    op.drop_table("competitions")
