"""Games against people: a game a person played on the dashboard's Play page against stored bot
versions, its seats (each a bot version or the person) and its transcript, stored whole.

These live in tables of their own (``human_matches``, ``human_seats``, ``human_transcripts``),
never in ``matches``: nothing a league reads (its blocks, standings, ratings, match lists) can
count them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, insert, select

from workers.store.repo.common import BotVersion, _version
from workers.store.schema import (
    FAULT_COLUMNS,
    bot_versions,
    bots,
    human_matches,
    human_seats,
    human_transcripts,
)


@dataclass(frozen=True, slots=True)
class HumanSeat:
    """One seat of a game against a person, ready to store: ``bot_version_id`` for a bot's seat,
    ``person`` for the person's (its seat name in the transcript, ``human:NAME``)."""

    seat: int
    bot_version_id: int | None
    person: str | None
    score: int
    rank: int
    faults: Mapping[str, int]
    defaulted: int = 0
    forfeited: bool = False
    think_ms: int = 0
    fault_detail: str | None = None

    def __post_init__(self) -> None:
        if (self.bot_version_id is None) == (self.person is None):
            raise ValueError("a seat is either a bot version's or the person's")


@dataclass(frozen=True, slots=True)
class HumanMatch:
    """A finished game against a person, ready to store."""

    variant: str
    config: Mapping[str, Any]
    seed: int
    digest: str
    termination: str
    seats: Sequence[HumanSeat]
    transcript: Mapping[str, Any]
    operator: bool = False
    """Whether the person was the dashboard's signed-in operator (else a guest)."""


def record_human_match(engine: Engine, match: HumanMatch) -> int:
    """Store a game against a person, its seats and its transcript in one transaction; its id."""
    with engine.begin() as conn:
        match_id = conn.execute(
            insert(human_matches)
            .values(
                variant=match.variant,
                config=dict(match.config),
                seed=match.seed,
                digest=match.digest,
                termination=match.termination,
                operator=match.operator,
            )
            .returning(human_matches.c.id)
        ).scalar_one()
        conn.execute(insert(human_seats), [_seat_row(match_id, seat) for seat in match.seats])
        conn.execute(
            insert(human_transcripts).values(
                match_id=match_id, body=json.dumps(match.transcript, sort_keys=True)
            )
        )
    return int(match_id)


def _seat_row(match_id: int, seat: HumanSeat) -> dict[str, Any]:
    row: dict[str, Any] = {
        "match_id": match_id,
        "seat": seat.seat,
        "bot_version_id": seat.bot_version_id,
        "person": seat.person,
        "score": seat.score,
        "rank": seat.rank,
        "defaulted": seat.defaulted,
        "forfeited": seat.forfeited,
        "think_ms": seat.think_ms,
        "fault_detail": seat.fault_detail,
    }
    for kind, column in FAULT_COLUMNS.items():
        row[column] = int(seat.faults.get(kind, 0))
    return row


def playable_versions(engine: Engine, variant: str | None = None) -> list[BotVersion]:
    """The stored bot versions a person may play against (every version not retired), by bot name
    and newest version first; only ``variant``'s when given."""
    query = (
        select(bot_versions, bots.c.name)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bot_versions.c.retired_at.is_(None))
        .order_by(bots.c.name, bot_versions.c.version.desc())
    )
    if variant is not None:
        query = query.where(bot_versions.c.variant == variant)
    with engine.connect() as conn:
        return [_version(row, row.name) for row in conn.execute(query)]


def human_transcript(engine: Engine, match_id: int) -> dict[str, Any] | None:
    """A stored game against a person's transcript, or ``None``."""
    with engine.connect() as conn:
        body = conn.execute(
            select(human_transcripts.c.body).where(human_transcripts.c.match_id == match_id)
        ).scalar()
    return None if body is None else dict(json.loads(body))
