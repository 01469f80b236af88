"""blocks by league, status and number

- ``ix_blocks_league_id_status_number`` replaces ``ix_blocks_league_id_status`` (its prefix, so every
  query that used it uses the new one). A warm worker asks, for each block message it takes, for the
  league's last pending blocks (``repo.pending_blocks_beside``: ``status = 'pending' ORDER BY number
  DESC LIMIT n``). Before a league's rows had statistics (a league of thousands of blocks just
  created, before autovacuum's ANALYZE), PostgreSQL read every pending block through the old index
  and sorted them: 7.3 ms for a league of 20,000 blocks against 0.07 ms with this one, and half of
  the server's CPU per block in the capacity bench (docs/capacity.md).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_blocks_league_id_status_number", "blocks", ["league_id", "status", "number"])
    op.drop_index("ix_blocks_league_id_status", table_name="blocks")


def downgrade() -> None:
    op.create_index("ix_blocks_league_id_status", "blocks", ["league_id", "status"])
    op.drop_index("ix_blocks_league_id_status_number", table_name="blocks")
