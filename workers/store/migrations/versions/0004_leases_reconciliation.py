"""leases and reconciliation: leagues that finish without a coordinator

- ``blocks`` gains ``lease_until`` (the claim's lease, renewed by the worker that plays the block)
  and ``queued_at`` (when a message for it was last sent to the broker);
- ``leagues`` gains ``started_at`` (handed to the workers by ``league start``) and ``finished_at``;
- ``workers``: each worker's name, start and last heartbeat.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("blocks") as batch:
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("leagues") as batch:
        batch.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "workers",
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_workers")),
    )


def downgrade() -> None:
    op.drop_table("workers")
    with op.batch_alter_table("leagues") as batch:
        batch.drop_column("finished_at")
        batch.drop_column("started_at")
    with op.batch_alter_table("blocks") as batch:
        batch.drop_column("queued_at")
        batch.drop_column("lease_until")
