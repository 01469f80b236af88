"""retired bot versions

- ``bot_versions.retired_at``: when the version was retired (``sixnimmt bot retire``); NULL while it
  may enter leagues. A retired version enters no new league and stays in the leagues it played
  (their results and transcripts name it); ``sixnimmt bot unretire`` sets it back to NULL.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bot_versions") as batch:
        batch.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bot_versions") as batch:
        batch.drop_column("retired_at")
