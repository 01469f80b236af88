"""rankings from a batch fit, fault reasons, leagues that add rounds

- ``ratings`` gains the batch fit: the method that ordered the table, the entrant's fitted score
  (the sort key) and a JSON ``detail`` (intervals, rank interval, the gap to the next entrant); the
  mean score's interval may be NULL (too few blocks).
- ``seat_results`` gains ``exceptions`` (a bot's own exception is a fault kind of its own) and
  ``fault_detail``: JSON with each fault's reason, the process's exit and its stderr tail.
- ``leagues`` gains ``stopping``: JSON for leagues that add deals as they go (adaptive leagues
  and SPRT tests); NULL for a fixed plan.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.add_column(sa.Column("method", sa.String(20), nullable=True))
        batch.add_column(sa.Column("score", sa.Float, nullable=True))
        batch.add_column(sa.Column("detail", sa.JSON, nullable=True))
        # Too few blocks give no interval (NULL) rather than a zero-width one.
        batch.alter_column("ci_low", existing_type=sa.Float, nullable=True)
        batch.alter_column("ci_high", existing_type=sa.Float, nullable=True)
    with op.batch_alter_table("seat_results") as batch:
        batch.add_column(sa.Column("exceptions", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("fault_detail", sa.Text, nullable=True))
    with op.batch_alter_table("leagues") as batch:
        batch.add_column(sa.Column("stopping", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("leagues") as batch:
        batch.drop_column("stopping")
    with op.batch_alter_table("seat_results") as batch:
        batch.drop_column("fault_detail")
        batch.drop_column("exceptions")
    with op.batch_alter_table("ratings") as batch:
        batch.alter_column("ci_high", existing_type=sa.Float, nullable=False)
        batch.alter_column("ci_low", existing_type=sa.Float, nullable=False)
        batch.drop_column("detail")
        batch.drop_column("score")
        batch.drop_column("method")
