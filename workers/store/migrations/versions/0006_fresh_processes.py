"""warm bots: ``leagues.fresh_processes``, a league whose blocks each start their bots afresh

A worker keeps bot processes warm between blocks (``workers.play.warm``); a league created with
``--fresh-processes`` opts out, so no bot carries memory from one block to the next.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("leagues") as batch:
        batch.add_column(sa.Column("fresh_processes", sa.Boolean(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("leagues") as batch:
        batch.drop_column("fresh_processes")
