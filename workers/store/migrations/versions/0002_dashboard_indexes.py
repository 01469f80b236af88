"""indexes for the dashboard

The live view reads blocks by status and finishing time; the bot page finds a version's leagues
and its matches newest first. The composite seat_results index replaces the single-column one
it starts with, so a seat result still costs one extra index write, not two.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_blocks_status_finished_at", "blocks", ["status", "finished_at"])
    op.create_index("ix_league_entrants_bot_version_id", "league_entrants", ["bot_version_id"])
    op.create_index("ix_seat_results_bot_version_id_match_id", "seat_results", ["bot_version_id", "match_id"])
    op.drop_index("ix_seat_results_bot_version_id", table_name="seat_results")


def downgrade() -> None:
    op.create_index("ix_seat_results_bot_version_id", "seat_results", ["bot_version_id"])
    op.drop_index("ix_seat_results_bot_version_id_match_id", table_name="seat_results")
    op.drop_index("ix_league_entrants_bot_version_id", table_name="league_entrants")
    op.drop_index("ix_blocks_status_finished_at", table_name="blocks")
