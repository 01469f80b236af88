"""The SDK's base class for classic 6 nimmt! bots (``bot_sdk.ClassicBot`` re-exports it)."""

from __future__ import annotations

from typing import ClassVar

from bot_sdk.bot import Bot, fewest_heads_row
from games.classic.rules.classic import ClassicView
from referee.rules.core import Action, DecisionKind, View


class ClassicBot(Bot):
    """A bot for classic 6 nimmt!: choose a card each turn, and a row when a low card takes one."""

    variants: ClassVar[tuple[str, ...]] = ("classic",)

    def decide(self, view: View) -> Action:
        assert isinstance(view, ClassicView) and view.decision is not None
        if view.decision.kind is DecisionKind.ROW:
            return self.choose_row(view)
        return self.choose_card(view)

    def choose_card(self, view: ClassicView) -> int:
        """The card to play this turn; ``view.hand`` holds the legal choices."""
        raise NotImplementedError

    def choose_row(self, view: ClassicView) -> int:
        """The row your low card takes (rule 4). By default the one with the fewest bull heads."""
        return fewest_heads_row(view.rows)
