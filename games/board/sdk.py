"""The bot base class for 6 nimmt! Brettspiel (variant ``board``: basic or pro, with or without luck).

Subclass :class:`BrettspielBot` and override :meth:`~BrettspielBot.choose_tiles`; override
:meth:`~BrettspielBot.choose_luck` and :meth:`~BrettspielBot.choose_pile` to use luck cards,
and, in the pro version, :meth:`~BrettspielBot.choose_action_card` to play action cards and
:meth:`~BrettspielBot.choose_row` to pick the row a taken row's tile opens. The referee
attaches tiles itself (rules 1–3); :func:`attach_target`, :func:`plan_target` and
:func:`attach_points` tell where a tile would go now and what it would score, :func:`plan_of`
what the action cards played so far do to the tile being attached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from bot_sdk.bot import Bot
from games.board.rules.board import SpaceKind
from games.board.rules.brettspiel import (
    ActionCard,
    BrettspielView,
    LuckCard,
    Plan,
    attach_points,
    attach_target,
    attach_tile,
    next_free_row,
    plan_target,
    play_count,
)
from games.board.rules.brettspiel_attach import FORCED, space_points
from referee.rules.core import Action, DecisionKind, View

__all__ = [
    "FORCED",
    "ActionCard",
    "BrettspielBot",
    "BrettspielView",
    "LuckCard",
    "Plan",
    "attach_points",
    "attach_target",
    "attach_tile",
    "first_space_value",
    "plan_of",
    "plan_target",
    "play_count",
    "points_now",
    "space_value",
    "tiles_due",
]


class BrettspielBot(Bot):
    """A bot for the board game: play tiles, and optionally luck and action cards."""

    variants: ClassVar[tuple[str, ...]] = ("board",)

    def decide(self, view: View) -> Action:
        assert isinstance(view, BrettspielView) and view.decision is not None
        kind = view.decision.kind
        if kind is DecisionKind.ACTION_CARD:
            return self.choose_action_card(view)
        if kind is DecisionKind.LUCK:
            return self.choose_luck(view)
        if kind is DecisionKind.ROW:
            return int(self.choose_row(view))
        if kind is DecisionKind.PILE:
            return int(self.choose_pile(view))
        tiles = tuple(sorted(self.choose_tiles(view)))
        return tiles[0] if kind is DecisionKind.CARD else tiles

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        """The tiles to play this round: :func:`tiles_due` of them (1 or 2) from ``view.screen``.

        Return a sequence even for one tile, e.g. ``[min(view.screen)]``.
        """
        raise NotImplementedError

    def choose_action_card(self, view: BrettspielView) -> Action:
        """Pro version: an action card before your tile ``view.attaching`` is attached, one of
        ``view.decision.options``; you are asked again after each card until you pass.

        ``()`` passes; ``(ActionCard.STOP, row)``, ``(ActionCard.TILE_SWAP, tile)``,
        ``(ActionCard.SKIP,)``, ``(ActionCard.MOVE_TO_FRONT, row)``,
        ``(ActionCard.ATTACH_ASCENDING, row)``, ``(ActionCard.ONE_MORE_TILE, tile)``. Each card
        left in hand at the end is worth a plus point. By default: pass.
        """
        return ()

    def choose_luck(self, view: BrettspielView) -> Action:
        """A luck card before your tile ``view.attaching`` is attached: one of ``view.decision.options``.

        ``()`` passes; ``(LuckCard.PLUS_POINTS,)`` makes the space "+5";
        ``(LuckCard.POSITIVE_OXEN, a, b)`` scores tiles ``a`` and ``b`` of the row as plus.
        By default: pass.
        """
        return ()

    def choose_row(self, view: BrettspielView) -> int:
        """Pro version: the free row (one of ``view.decision.options``) your tile ``view.opening[0]``
        opens after taking a row.

        By default the row whose first space is worth most to that tile
        (:func:`first_space_value`), on a tie the basic game's row (the next free row below).
        """
        assert view.decision is not None and view.opening is not None
        tile, taken = view.opening
        usual = next_free_row(view.rows, taken)
        rows = [r for r in view.decision.options if isinstance(r, int)]
        return max(rows, key=lambda r: (first_space_value(view, tile, r), r == usual, -r))

    def choose_pile(self, view: BrettspielView) -> int:
        """The luck card to take for a clover: a :class:`LuckCard` in ``view.decision.options``.

        By default the kind this seat holds fewer of ("Positive Oxen" on a tie).
        """
        plus, positive = view.luck[view.seat]
        return LuckCard.PLUS_POINTS if plus < positive else LuckCard.POSITIVE_OXEN


def tiles_due(view: BrettspielView) -> int:
    """How many tiles this round's play decision asks for."""
    assert view.decision is not None
    first = view.decision.options[0]
    return len(first) if isinstance(first, tuple) else 1


def points_now(view: BrettspielView, tile: int) -> int:
    """What ``tile`` would score if it were attached to the board as it is now (no card)."""
    return attach_points(view.board, view.oxen, view.rows, tile, FORCED, view.stops)


def plan_of(view: BrettspielView) -> Plan:
    """What the action cards played so far do to the tile being attached (``view.attaching``)."""
    if view.attaching is None:
        return FORCED
    tile, row, space = view.attaching
    if space == 0:
        return Plan(row, front=True)
    forced_row = attach_target(view.rows, tile, view.stops)[0]
    return Plan(row if row != forced_row else -1, skips=space - len(view.rows[row]))


def space_value(view: BrettspielView, tile: int, row: int, space: int) -> float:
    """What ``tile`` landing on a space that does not take the row is worth: the space's points;
    an action card drawn counts 1.5 (a plus point at the end, and a use before), a tile drawn −1
    (its oxen count as minus points if it is still behind the screen at the end)."""
    target = view.board.rows[row].spaces[space]
    if target.kind is SpaceKind.DRAW_ACTION_CARD:
        return 1.5
    if target.kind is SpaceKind.DRAW_TILE:
        return -1.0
    return float(space_points(target, view.oxen[tile]))


def first_space_value(view: BrettspielView, tile: int, row: int) -> float:
    """What opening ``row`` with ``tile`` is worth (:func:`space_value` of its first space)."""
    return space_value(view, tile, row, 0)
