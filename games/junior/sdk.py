"""Bot base classes for 6 nimmt! Junior, one per mode, each with typed hooks.

A Junior bot sees a :class:`~games.junior.rules.junior.JuniorView`: the rows (card ids), its own
hand, every seat's collected cards, the face-up card waiting for a row, and its pending
decision with the legal options. ``view.cows(card)`` names a card's cows, ``view.rows_for(card)``
lists the rows a card may go to and ``view.takes(card, row)`` counts what a move collects.

A decision with a single legal option is never asked: the referee makes it.
"""

from __future__ import annotations

from typing import ClassVar

from bot_sdk.bot import Bot
from games.junior.rules.junior import JuniorView
from referee.rules.core import Action, DecisionKind, View

__all__ = ["JuniorAdvancedBot", "JuniorBasicBot", "JuniorExpertsBot", "JuniorView"]


def _junior(view: View) -> JuniorView:
    assert isinstance(view, JuniorView) and view.decision is not None
    return view


class JuniorBasicBot(Bot):
    """The basic game: the card in ``view.card`` was turned over for you; choose its row."""

    variants: ClassVar[tuple[str, ...]] = ("junior-basic",)

    def decide(self, view: View) -> Action:
        return self.choose_row(_junior(view))

    def choose_row(self, view: JuniorView) -> int:
        """The row for ``view.card``; ``view.decision.options`` holds the legal rows (rules 1 and 2)."""
        raise NotImplementedError


class JuniorAdvancedBot(Bot):
    """The advanced game: play one hand card to a row. ``view.fewest_wins`` tells the scoring."""

    variants: ClassVar[tuple[str, ...]] = ("junior-advanced",)

    def decide(self, view: View) -> Action:
        card, row = self.choose_play(_junior(view))
        return (card, row)

    def choose_play(self, view: JuniorView) -> tuple[int, int]:
        """``(card, row)``; ``view.decision.options`` holds every legal pair."""
        raise NotImplementedError


class JuniorExpertsBot(Bot):
    """The experts' game: play a hand card, then choose its row (or, with no match, the row to collect)."""

    variants: ClassVar[tuple[str, ...]] = ("junior-experts",)

    def decide(self, view: View) -> Action:
        view = _junior(view)
        assert view.decision is not None
        if view.decision.kind is DecisionKind.ROW:
            return self.choose_row(view)
        return self.choose_card(view)

    def choose_card(self, view: JuniorView) -> int:
        """The hand card to play; ``view.hand`` holds the choices."""
        raise NotImplementedError

    def choose_row(self, view: JuniorView) -> int:
        """The row for the played ``view.card``; ``view.decision.options`` holds the legal rows.

        By default the row that collects the fewest cards (the first on a tie).
        """
        assert view.card is not None and view.decision is not None
        card = view.card
        rows: list[int] = [r for r in view.decision.options if isinstance(r, int)]
        return min(rows, key=lambda row: view.takes(card, row))
