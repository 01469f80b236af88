"""secret deals and a store's own id

- ``leagues.deal_key``: the secret key of a league's deal seeds (32 random bytes; NULL for the
  leagues made before it, whose deals follow from their seed alone, as they always did). It is
  published with the seed once the league is finished.
- ``store_identity``: one row, the store's id (random, written here), which every message to the
  workers names, so a worker plays only its own store's blocks.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("leagues") as batch:
        batch.add_column(sa.Column("deal_key", sa.LargeBinary(), nullable=True))
    identity = op.create_table(
        "store_identity",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_store_identity")),
    )
    op.bulk_insert(identity, [{"id": uuid.uuid4().hex}])


def downgrade() -> None:
    op.drop_table("store_identity")
    with op.batch_alter_table("leagues") as batch:
        batch.drop_column("deal_key")
