"""games against people

- ``human_matches``, ``human_seats``, ``human_transcripts``: games a person played on the
  dashboard's Play page against stored bot versions, each seat a bot version or the person
  (``person``: its seat name in the transcript, ``human:NAME``), with its transcript. New tables
  beside ``matches``, never rows of it: a league's standings, ratings and match lists read
  ``matches`` through its blocks, and a bot's league match list reads ``seat_results``; none of
  them can count a game against a person. Existing stores gain three empty tables and nothing else
  changes.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "human_matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(71), nullable=False),
        sa.Column("termination", sa.String(30), nullable=False),
        sa.Column("operator", sa.Boolean(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("id", name="pk_human_matches"),
    )
    op.create_table(
        "human_seats",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=True),
        sa.Column("person", sa.String(40), nullable=True),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        *(
            sa.Column(name, sa.Integer(), nullable=False, server_default="0")
            for name in (
                "timeouts",
                "crashes",
                "disconnects",
                "illegal",
                "protocol",
                "exceptions",
                "defaulted",
            )
        ),
        sa.Column("forfeited", sa.Boolean(), nullable=False, server_default="0"),
        sa.Column("think_ms", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("fault_detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"], ["human_matches.id"], name="fk_human_seats_match_id_human_matches"
        ),
        sa.ForeignKeyConstraint(
            ["bot_version_id"], ["bot_versions.id"], name="fk_human_seats_bot_version_id_bot_versions"
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_human_seats"),
    )
    op.create_index("ix_human_seats_bot_version_id_match_id", "human_seats", ["bot_version_id", "match_id"])
    op.create_table(
        "human_transcripts",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"], ["human_matches.id"], name="fk_human_transcripts_match_id_human_matches"
        ),
        sa.PrimaryKeyConstraint("match_id", name="pk_human_transcripts"),
    )


def downgrade() -> None:
    op.drop_table("human_transcripts")
    op.drop_index("ix_human_seats_bot_version_id_match_id", table_name="human_seats")
    op.drop_table("human_seats")
    op.drop_table("human_matches")
