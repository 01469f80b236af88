"""The basic game's forced moves as pure functions: where a tile goes, what it scores.

The engine uses them, and so can bots that plan or simulate (they see the same board).
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules.board import TAKE_KINDS, Board, Space, SpaceKind
from referee.rules.cards import ascending_row


def attach_target(rows: Sequence[Sequence[int]], tile: int) -> tuple[int, int]:
    """Rules 1–3: the ``(row, space)`` a tile must be attached to, given every row of the board."""
    lasts = [row[-1] if row else 0 for row in rows]
    row = ascending_row(tile, lasts)
    if row < 0:  # rule 3: too low for every row, so after the highest last tile
        row = lasts.index(max(lasts))
    return row, len(rows[row])


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


def attach_tile(board: Board, oxen: Sequence[int], rows: list[tuple[int, ...]], tile: int) -> int:
    """Attach ``tile`` to ``rows`` in place as rules 1–3 force, without luck cards; return its points.

    For planning and simulation; the engine itself also plays luck cards and records events.
    """
    row, space = attach_target(rows, tile)
    spaces = board.rows[row].spaces
    if spaces[space].kind not in TAKE_KINDS:
        rows[row] += (tile,)
        return space_points(spaces[space], oxen[tile])
    points = -sum(oxen[t] for t in rows[row] if t)
    rows[row] = ()
    opened = next_free_row(rows, row)
    rows[opened] = (tile,)
    return points + space_points(board.rows[opened].spaces[0], oxen[tile])


def attach_points(board: Board, oxen: Sequence[int], rows: Sequence[tuple[int, ...]], tile: int) -> int:
    """The points attaching ``tile`` would score on the board as it is (no luck card)."""
    return attach_tile(board, oxen, list(rows), tile)


def next_free_row(rows: Sequence[Sequence[int]], taken: int) -> int:
    """The row a taken row's tile opens: the next free row below, else the topmost free one."""
    free = [r for r, tiles in enumerate(rows) if not tiles and r != taken]
    below = [r for r in free if r > taken]
    return (below or free)[0]


def play_count(board: Board, rows: Sequence[Sequence[int]]) -> int:
    """Tiles each seat plays: 2 while an active row shows an uncovered double-tile space, else 1."""
    for row, tiles in zip(board.rows, rows, strict=True):
        if tiles and any(i >= len(tiles) or not tiles[i] for i in row.double_tile_spaces):
            return 2
    return 1
