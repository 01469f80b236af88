"""What Brettspiel shows: the luck and action cards, the public events and a seat's view.

Everything here may cross the wire: events are public, and a view holds only what its seat
may know (its own screen and action cards; everyone's scores and luck cards, which are public
because they come from face-up piles and are played face up; how many action cards each seat
holds; the face-up discard pile). A tile or action card drawn face down is never in an event.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple

from games.board.rules.board import Board
from referee.rules.core import Action, Decision
from referee.rules.core import GameEnded as GameEnded  # the core's game-over event, among this game's


class LuckCard(enum.IntEnum):
    """The luck cards; a ``LUCK`` action is ``()`` (pass) or ``(card, *targets)``."""

    PLUS_POINTS = 1
    """"5 Plus Points": the space becomes "+5" once; not on a row's last space. Action ``(1,)``."""
    POSITIVE_OXEN = 2
    """"Positive Oxen": on a row's last space, two of the row's tiles count as plus. ``(2, a, b)``."""


class ActionCard(enum.IntEnum):
    """The pro version's action cards; an ``ACTION_CARD`` action is ``()`` (pass) or ``(card, *target)``."""

    STOP = 1
    """"Stop!": a stop sign at the end of an active row, which no tile may join. ``(1, row)``."""
    TILE_SWAP = 2
    """"Tile Swap": the played tile goes back behind the screen, ``tile`` is attached now. ``(2, tile)``."""
    SKIP = 3
    """"Skip": the tile skips the row's next free space, which stays empty. ``(3,)``."""
    MOVE_TO_FRONT = 4
    """"Move to the Front": the tile goes to the first space of ``row``, the row shifts. ``(4, row)``."""
    ATTACH_ASCENDING = 5
    """"Attach Ascending": the tile goes behind any lower last tile, rule 2 ignored. ``(5, row)``."""
    ONE_MORE_TILE = 6
    """"One More Tile": ``tile`` is played too; the seat's played tiles are attached now. ``(6, tile)``."""


PLUS_POINTS_VALUE = 5
"""What "5 Plus Points" scores."""
POSITIVE_OXEN_TILES = 2
"""How many tiles "Positive Oxen" turns to plus (all of them when the row holds fewer)."""
ACTION_CARD_VALUE = 1
"""Plus points for each action card in hand at the end of the pro version."""


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
    """A tile went to ``space`` of ``row``; ``effect`` is what that space did (a space kind).

    After "Skip" the spaces between the row's last tile and ``space`` stay empty.
    """

    seat: int
    tile: int
    row: int
    space: int
    effect: str


class RowTaken(NamedTuple):
    """A take-row space: ``tiles`` (``oxen`` in all) left the board; the tile opened ``opened``.

    The tiles go to the box, or behind the seat's screen on "Take Row (Tiles)". In the pro
    version ``opened`` is -1: the seat chooses the new row next (:class:`RowOpened`).
    """

    seat: int
    row: int
    tiles: tuple[int, ...]
    oxen: int
    opened: int


class RowOpened(NamedTuple):
    """Pro version: a taken row's tile opened ``row``, the seat's choice; ``effect``: its first space's."""

    seat: int
    tile: int
    row: int
    effect: str


class RowShifted(NamedTuple):
    """Move to the Front: ``tile`` went to the first space of ``row``; the row's tiles up to its
    first free space moved one space right, and the tile that landed on ``space`` triggered it
    (``effect``, a space kind)."""

    seat: int
    tile: int
    row: int
    space: int
    effect: str


class ActionCardsDealt(NamedTuple):
    """Pro version: every seat was dealt ``each`` action cards face down; ``pile`` are left."""

    each: int
    pile: int


class ActionCardPlayed(NamedTuple):
    """A seat played an action card before attaching ``tile``; ``targets`` are its row or tile."""

    seat: int
    card: int
    tile: int
    targets: tuple[int, ...]


class StopSignsRemoved(NamedTuple):
    """A row was taken: the stop signs left ``rows``."""

    rows: tuple[int, ...]


class TileDrawn(NamedTuple):
    """Draw Tile: a seat drew a tile from the supply, face down."""

    seat: int


class ActionCardDrawn(NamedTuple):
    """Draw Action Card: a seat drew an action card, face down."""

    seat: int


class ActionCardsReshuffled(NamedTuple):
    """The action card pile was empty: the ``cards`` of the discard pile became the new pile."""

    cards: int


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


@dataclass(frozen=True, slots=True)
class BrettspielView:
    """What one seat knows: its own screen and action cards, the board, every score and luck card."""

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
    """During a ``LUCK`` or ``ACTION_CARD`` decision: ``(tile, row, space)`` where this seat's
    tile is going, with the action cards played on it so far (space 0: "Move to the Front")."""
    draws: int
    """During a ``PILE`` decision: how many luck cards this seat still takes."""
    decision: Decision | None
    board: Board
    oxen: tuple[int, ...]
    """The oxen on each tile, by tile number."""
    luck_cards: bool
    """Whether the game is played with luck cards."""
    pro: bool = False
    """Whether this is the pro version (action cards, stop signs, the red side's spaces)."""
    stops: tuple[int, ...] = ()
    """The rows with a stop sign, which no tile may join."""
    stop_signs: int = 0
    """How many stop signs may lie on the board at once."""
    action_cards: tuple[int, ...] = ()
    """This seat's action cards (:class:`ActionCard` numbers, ascending); the others are hidden."""
    hand_sizes: tuple[int, ...] = ()
    """How many action cards each seat holds."""
    action_pile_size: int = 0
    """Face-down action cards left in the pile."""
    discard: tuple[int, ...] = ()
    """The face-up discard pile of played action cards, ascending."""
    opening: tuple[int, int] | None = None
    """During a ``ROW`` decision: ``(tile, taken row)``, the tile that opens the row you choose."""

    def unseen(self) -> tuple[int, ...]:
        """Tiles this seat does not see now: the other screens and the supply (and, in the basic game
        with four or more players, the tiles left in the box)."""
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
            "pro": self.pro,
            "stops": list(self.stops),
            "stop_signs": self.stop_signs,
            "action_cards": list(self.action_cards),
            "hand_sizes": list(self.hand_sizes),
            "action_pile_size": self.action_pile_size,
            "discard": list(self.discard),
            "opening": None if self.opening is None else list(self.opening),
        }


def _listed(action: Action) -> Any:
    return list(action) if isinstance(action, tuple) else action
