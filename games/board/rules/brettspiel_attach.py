"""Where a tile goes and what it scores, as pure functions: the rules' forced moves and the
pro version's changes to them (stop signs, skipped spaces, a row of the player's choice, the
front of a row).

The engine uses them, and so can bots that plan or simulate (they see the same board). A row
is a tuple of tiles from its first space on; ``0`` marks a space left empty by "Skip".
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from games.board.rules.board import TAKE_KINDS, Board, Space, SpaceKind
from referee.rules.placement import ascending_row


class Plan(NamedTuple):
    """How the tile about to be attached goes, after the action cards played on it so far."""

    row: int = -1
    """The row "Attach Ascending" or "Move to the Front" chose; -1: the row rules 1–3 force."""
    front: bool = False
    """"Move to the Front": the tile goes to the row's first space."""
    skips: int = 0
    """Spaces "Skip" leaves empty before the tile."""


FORCED = Plan()
"""No action card played: rules 1–3 decide."""


def attach_target(rows: Sequence[Sequence[int]], tile: int, stops: Collection[int] = ()) -> tuple[int, int]:
    """Rules 1–3: the ``(row, space)`` a tile must be attached to, given every row of the board.

    Rows with a stop sign (``stops``) take no tile.
    """
    lasts = [row[-1] if row and r not in stops else 0 for r, row in enumerate(rows)]
    row = ascending_row(tile, lasts)
    if row < 0:  # rule 3: too low for every row, so after the highest last tile
        row = lasts.index(max(lasts))
    return row, len(rows[row])


def plan_target(
    rows: Sequence[Sequence[int]], tile: int, plan: Plan = FORCED, stops: Collection[int] = ()
) -> tuple[int, int]:
    """The ``(row, space)`` the tile lands on under ``plan`` (space 0: the front of the row)."""
    if plan.front:
        return plan.row, 0
    row = plan.row if plan.row >= 0 else attach_target(rows, tile, stops)[0]
    return row, len(rows[row]) + plan.skips


def free_space(row: Sequence[int]) -> int:
    """The row's first free space: a skipped one, else the space after its last tile."""
    for space, tile in enumerate(row):
        if not tile:
            return space
    return len(row)


def shift_to_front(row: Sequence[int], tile: int) -> tuple[tuple[int, ...], int]:
    """Move to the Front: the row with ``tile`` first, and the space its shifted tiles filled.

    The tiles from the first space up to the first free space move one space right; the tile
    that lands on that free space (the returned space) is the one that triggers it.
    """
    space = free_space(row)
    return (tile, *row[:space], *row[space + 1 :]), space


def put_tile(row: Sequence[int], space: int, tile: int) -> tuple[int, ...]:
    """The row with ``tile`` on ``space``; spaces skipped on the way stay empty (0)."""
    tiles = [*row, *[0] * (space + 1 - len(row))]
    assert not tiles[space], f"space {space} of {tuple(row)} is taken"
    tiles[space] = tile
    return tuple(tiles)


def space_points(space: Space, oxen: int) -> int:
    """The points a tile with ``oxen`` scores on a space that does not take the row."""
    kind = space.kind
    if kind is SpaceKind.GREEN_OX:
        return oxen * space.amount
    if kind is SpaceKind.RED_OX:
        return -oxen * space.amount
    if kind is SpaceKind.POINTS:
        return space.amount
    return 0


def attach_tile(
    board: Board,
    oxen: Sequence[int],
    rows: list[tuple[int, ...]],
    tile: int,
    plan: Plan = FORCED,
    stops: Collection[int] = (),
) -> int:
    """Attach ``tile`` to ``rows`` in place under ``plan``, without luck cards; return its points.

    For planning and simulation; the engine itself also plays cards and records events. A
    taken row's tile opens the next free row below, else the topmost (the basic game's rule;
    in the pro version the player chooses). "Take Row (Tiles)" scores nothing now, and
    "Draw" spaces score nothing.
    """
    row, space = plan_target(rows, tile, plan, stops)
    landing = tile
    if plan.front:
        shifted, space = shift_to_front(rows[row], tile)
        landing = shifted[space]
        rows[row] = (*shifted[:space], 0, *shifted[space + 1 :])
    spaces = board.rows[row].spaces
    if spaces[space].kind not in TAKE_KINDS:
        rows[row] = put_tile(rows[row], space, landing)
        return space_points(spaces[space], oxen[landing])
    taken = sum(oxen[t] for t in rows[row] if t)
    points = 0 if spaces[space].kind is SpaceKind.TAKE_TILES else -taken
    rows[row] = ()
    opened = next_free_row(rows, row)
    rows[opened] = (landing,)
    return points + space_points(board.rows[opened].spaces[0], oxen[landing])


def attach_points(
    board: Board,
    oxen: Sequence[int],
    rows: Sequence[tuple[int, ...]],
    tile: int,
    plan: Plan = FORCED,
    stops: Collection[int] = (),
) -> int:
    """The points attaching ``tile`` under ``plan`` would score on the board as it is (no luck card)."""
    return attach_tile(board, oxen, list(rows), tile, plan, stops)


def next_free_row(rows: Sequence[Sequence[int]], taken: int) -> int:
    """The row a taken row's tile opens: the next free row below, else the topmost free one."""
    free = free_rows(rows, taken)
    below = [r for r in free if r > taken]
    return (below or free)[0]


def free_rows(rows: Sequence[Sequence[int]], taken: int) -> tuple[int, ...]:
    """The rows a taken row's tile may open: every free row but the one just taken."""
    return tuple(r for r, tiles in enumerate(rows) if not tiles and r != taken)


def play_count(board: Board, rows: Sequence[Sequence[int]]) -> int:
    """Tiles each seat plays: 2 while an active row shows an uncovered double-tile space, else 1."""
    for row, tiles in zip(board.rows, rows, strict=True):
        if tiles and any(i >= len(tiles) or not tiles[i] for i in row.double_tile_spaces):
            return 2
    return 1
