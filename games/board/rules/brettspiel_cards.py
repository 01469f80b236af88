"""Which luck and action cards a seat may play before its tile is attached: the legal options.

Pure functions of the board as it is; the engine lists them in ``LUCK`` and ``ACTION_CARD``
decisions, and bots may call them to look ahead.

Action cards are offered in a fixed order for one tile, which loses no combination: while no
card has changed the tile's way yet, "Tile Swap", "One More Tile", "Stop!", "Move to the Front"
and "Attach Ascending"; then "Skip" (not after "Move to the Front"), once per space to skip.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import combinations

from games.board.rules.board import Board
from games.board.rules.brettspiel_attach import FORCED, Plan, plan_target
from games.board.rules.brettspiel_view import POSITIVE_OXEN_TILES, ActionCard, LuckCard
from referee.rules.core import Action


def luck_options(
    board: Board,
    rows: Sequence[tuple[int, ...]],
    tile: int,
    held: tuple[int, int],
    plan: Plan = FORCED,
    stops: Collection[int] = (),
) -> tuple[Action, ...]:
    """Pass ``()``, or a luck card ``held`` ("5 Plus Points", "Positive Oxen") may be played on
    the space the tile lands on: ``(1,)`` on any but a row's last space, ``(2, a, b)`` on the last
    one with every pair of the row's tiles. None with "Move to the Front" (the tile's own space
    triggers nothing)."""
    if plan.front:
        return ((),)
    row, space = plan_target(rows, tile, plan, stops)
    options: list[Action] = [()]
    if space < board.rows[row].last:
        if held[0]:
            options.append((LuckCard.PLUS_POINTS.value,))
    elif held[1]:
        tiles = sorted(t for t in rows[row] if t)
        k = min(POSITIVE_OXEN_TILES, len(tiles))
        options.extend((LuckCard.POSITIVE_OXEN.value, *pair) for pair in combinations(tiles, k))
    return tuple(options)


def action_card_options(
    board: Board,
    rows: Sequence[tuple[int, ...]],
    tile: int,
    hand: Collection[int],
    screen: Sequence[int],
    plan: Plan = FORCED,
    stops: Collection[int] = (),
    stop_signs: int = 2,
) -> tuple[Action, ...]:
    """Pass ``()``, or an action card from ``hand`` with its target, before ``tile`` is attached.

    ``screen`` holds the seat's other tiles (for "Tile Swap" and "One More Tile"); ``plan`` is
    what the cards played on this tile so far decided; ``stops`` are the rows with a stop sign,
    of which at most ``stop_signs`` may lie on the board.
    """
    options: list[Action] = [()]
    open_rows = [r for r, tiles in enumerate(rows) if tiles and r not in stops]
    fresh = plan == FORCED
    if fresh:
        if ActionCard.STOP in hand and len(stops) < stop_signs:
            options.extend((ActionCard.STOP.value, r) for r in open_rows)
        if ActionCard.TILE_SWAP in hand:
            options.extend((ActionCard.TILE_SWAP.value, t) for t in screen)
    if ActionCard.SKIP in hand and not plan.front:
        row, space = plan_target(rows, tile, plan, stops)
        if space < board.rows[row].last:
            options.append((ActionCard.SKIP.value,))
    if fresh:
        if ActionCard.MOVE_TO_FRONT in hand:
            options.extend((ActionCard.MOVE_TO_FRONT.value, r) for r in open_rows if tile < rows[r][0])
        if ActionCard.ATTACH_ASCENDING in hand:
            options.extend((ActionCard.ATTACH_ASCENDING.value, r) for r in open_rows if rows[r][-1] < tile)
        if ActionCard.ONE_MORE_TILE in hand:
            options.extend((ActionCard.ONE_MORE_TILE.value, t) for t in screen)
    return tuple(options)


def deck_of(counts: Sequence[int]) -> tuple[int, ...]:
    """The action cards as a sorted multiset of :class:`ActionCard` numbers, ``counts[k - 1]`` of kind k."""
    return tuple(int(card) for card, count in zip(ActionCard, counts, strict=True) for _ in range(count))


def without(cards: Sequence[int], taken: Sequence[int]) -> tuple[int, ...] | None:
    """``cards`` less the multiset ``taken`` (sorted), or ``None`` when ``taken`` is not in ``cards``."""
    rest = sorted(cards)
    for card in taken:
        if card not in rest:
            return None
        rest.remove(card)
    return tuple(rest)
