"""What Brettspiel shows: the luck cards, the public events and a seat's view.

Everything here may cross the wire: events are public, and a view holds only what its seat
may know (its own screen; everyone's scores and luck cards, which are public because they
come from face-up piles and are played face up).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple

from referee.rules.board import Board
from referee.rules.core import Action, Decision


class LuckCard(enum.IntEnum):
    """The luck cards; a ``LUCK`` action is ``()`` (pass) or ``(card, *targets)``."""

    PLUS_POINTS = 1
    """"5 Plus Points": the space becomes "+5" once; not on a row's last space. Action ``(1,)``."""
    POSITIVE_OXEN = 2
    """"Positive Oxen": on a row's last space, two of the row's tiles count as plus. ``(2, a, b)``."""


PLUS_POINTS_VALUE = 5
"""What "5 Plus Points" scores."""
POSITIVE_OXEN_TILES = 2
"""How many tiles "Positive Oxen" turns to plus (all of them when the row holds fewer)."""


class TilesDealt(NamedTuple):
    """A set of tiles went behind the screens; ``rows`` is the board (the screens are secret)."""

    tile_set: int
    rows: tuple[tuple[int, ...], ...]


class TilesRevealed(NamedTuple):
    """Everyone's tiles of a round, face up: ``(tile, seat)`` pairs in the order of attaching."""

    tile_set: int
    round: int
    plays: tuple[tuple[int, int], ...]


class LuckCardPlayed(NamedTuple):
    """A seat played a luck card before attaching ``tile``; ``targets`` are Positive Oxen's tiles."""

    seat: int
    card: int
    tile: int
    targets: tuple[int, ...]


class TileAttached(NamedTuple):
    """A tile went to ``space`` of ``row``; ``effect`` is what that space did (a space kind)."""

    seat: int
    tile: int
    row: int
    space: int
    effect: str


class RowTaken(NamedTuple):
    """A take-row space: ``tiles`` (``oxen`` in all) left the board; the tile opened ``opened``."""

    seat: int
    row: int
    tiles: tuple[int, ...]
    oxen: int
    opened: int


class PointsScored(NamedTuple):
    """A seat scored ``points``; ``kept`` of them moved its marker (beyond ±44 they are lost)."""

    seat: int
    points: int
    kept: int
    total: int
    reason: str


class LuckCardTaken(NamedTuple):
    """A seat took a luck card from its pile (for a clover)."""

    seat: int
    card: int


class GameEnded(NamedTuple):
    """The game is over."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    termination: str


@dataclass(frozen=True, slots=True)
class BrettspielView:
    """What one seat knows: its own screen, the board, every score and luck card, nothing else."""

    seat: int
    players: int
    phase: str
    tile_set: int
    tile_sets: int
    """Sets of tiles this game deals (2 with two or three players)."""
    tiles_each: int
    round: int
    screen: tuple[int, ...]
    """This seat's tiles; the other screens are hidden."""
    screen_sizes: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    luck: tuple[tuple[int, int], ...]
    """Every seat's luck cards ("5 Plus Points", "Positive Oxen"): public, see the module doc."""
    piles: tuple[int, int]
    revealed: tuple[tuple[int, int], ...]
    """This round's face-up ``(tile, seat)`` pairs while they are attached."""
    attached: int
    boxed: tuple[int, ...]
    supply_size: int
    play_count: int
    """Tiles each seat plays this round: 1, or 2 with the "Play Two Tiles" row."""
    attaching: tuple[int, int, int] | None
    """During a ``LUCK`` decision: ``(tile, row, space)`` where this seat's tile is going."""
    draws: int
    """During a ``PILE`` decision: how many luck cards this seat still takes."""
    decision: Decision | None
    board: Board
    oxen: tuple[int, ...]
    """The oxen on each tile, by tile number."""
    luck_cards: bool
    """Whether the game is played with luck cards."""

    def unseen(self) -> tuple[int, ...]:
        """Tiles this seat has not seen: the other screens, the supply and the tiles left in the box."""
        seen = set(self.screen).union(self.boxed, (t for t, _ in self.revealed))
        for row in self.rows:
            seen.update(row)
        return tuple(t for t in range(1, len(self.oxen)) if t not in seen)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the view."""
        return {
            "seat": self.seat,
            "players": self.players,
            "phase": self.phase,
            "tile_set": self.tile_set,
            "tile_sets": self.tile_sets,
            "tiles_each": self.tiles_each,
            "round": self.round,
            "screen": list(self.screen),
            "screen_sizes": list(self.screen_sizes),
            "rows": [list(r) for r in self.rows],
            "scores": list(self.scores),
            "luck": [list(hand) for hand in self.luck],
            "piles": list(self.piles),
            "revealed": [list(p) for p in self.revealed],
            "attached": self.attached,
            "boxed": list(self.boxed),
            "supply_size": self.supply_size,
            "play_count": self.play_count,
            "attaching": None if self.attaching is None else list(self.attaching),
            "draws": self.draws,
            "decision": None
            if self.decision is None
            else {"kind": self.decision.kind.value, "options": [_listed(o) for o in self.decision.options]},
            "board": self.board.to_json(),
            "luck_cards": self.luck_cards,
        }


def _listed(action: Action) -> Any:
    return list(action) if isinstance(action, tuple) else action
