"""The bot base class for 6 nimmt! Brettspiel (variant ``board``, with or without luck cards).

Subclass :class:`BrettspielBot` and override :meth:`~BrettspielBot.choose_tiles`; override
:meth:`~BrettspielBot.choose_luck` and :meth:`~BrettspielBot.choose_pile` to use luck cards.
The referee attaches tiles itself (rules 1–3); :func:`attach_target` and :func:`attach_points`
tell where a tile would go now and what it would score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from bot_sdk.bot import Bot
from referee.rules.brettspiel import (
    BrettspielView,
    LuckCard,
    attach_points,
    attach_target,
    attach_tile,
    play_count,
)
from referee.rules.core import Action, DecisionKind, View

__all__ = [
    "BrettspielBot",
    "BrettspielView",
    "LuckCard",
    "attach_points",
    "attach_target",
    "attach_tile",
    "play_count",
    "points_now",
    "tiles_due",
]


class BrettspielBot(Bot):
    """A bot for the board game: play tiles, and optionally luck cards."""

    variants: ClassVar[tuple[str, ...]] = ("board",)

    def decide(self, view: View) -> Action:
        assert isinstance(view, BrettspielView) and view.decision is not None
        kind = view.decision.kind
        if kind is DecisionKind.LUCK:
            return self.choose_luck(view)
        if kind is DecisionKind.PILE:
            return int(self.choose_pile(view))
        tiles = tuple(sorted(self.choose_tiles(view)))
        return tiles[0] if kind is DecisionKind.CARD else tiles

    def choose_tiles(self, view: BrettspielView) -> Sequence[int]:
        """The tiles to play this round: :func:`tiles_due` of them (1 or 2) from ``view.screen``.

        Return a sequence even for one tile, e.g. ``[min(view.screen)]``.
        """
        raise NotImplementedError

    def choose_luck(self, view: BrettspielView) -> Action:
        """A luck card before your tile ``view.attaching`` is attached: one of ``view.decision.options``.

        ``()`` passes; ``(LuckCard.PLUS_POINTS,)`` makes the space "+5";
        ``(LuckCard.POSITIVE_OXEN, a, b)`` scores tiles ``a`` and ``b`` of the row as plus.
        By default: pass.
        """
        return ()

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
    """What ``tile`` would score if it were attached to the board as it is now (no luck card)."""
    return attach_points(view.board, view.oxen, view.rows, tile)
