"""Helpers for Brettspiel tests: small boards in the layout notation, and stepping a game."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.board.rules.board import Board, Tiles
from games.board.rules.brettspiel import Brettspiel, BrettspielConfig, BrettspielState, TileAttached
from referee.rules.core import Action, Event


def game(
    rows: Sequence[str],
    *,
    players: int = 3,
    luck: bool = False,
    oxen: Mapping[int, int] | None = None,
    **config: Any,
) -> Brettspiel:
    """A game on a board built for the test; every tile shows 1 ox unless ``oxen`` says otherwise."""
    return Brettspiel(
        BrettspielConfig(players=players, luck=luck, **config),
        board=Board.parse(rows),
        tiles=Tiles.from_oxen(oxen or {}, 100),
    )


def step(
    variant: Brettspiel, state: BrettspielState, actions: Mapping[int, Action]
) -> tuple[BrettspielState, list[Event]]:
    """Apply one step and return the next state and its events as a list."""
    state, events = variant.apply(state, actions)
    return state, list(events)


def placements(events: Sequence[Event]) -> list[tuple[int, int, int]]:
    """``(tile, row, space)`` of every attached tile, in order."""
    return [(e.tile, e.row, e.space) for e in events if isinstance(e, TileAttached)]


def of_type(events: Sequence[Event], kind: type[Any]) -> list[Any]:
    """The events of one type."""
    return [e for e in events if isinstance(e, kind)]
