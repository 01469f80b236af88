"""The bot base class for the 6 nimmt! 25th-anniversary variant (``anniversary``).

Subclass :class:`AnniversaryBot` and override :meth:`~AnniversaryBot.choose_card`; override
:meth:`~AnniversaryBot.choose_special` to play special cards when your card is placed,
:meth:`~AnniversaryBot.choose_take` to play "Negative = Positive" or swap a special card after
you take a row, and :meth:`~AnniversaryBot.choose_row` for a low card's row. Both special-card
decisions are ``ACTION_CARD`` decisions whose options are ``()`` (pass) and ``(kind, *targets)``
(a swap is ``(0, kind)``); :class:`Special` names the kinds. :func:`placement_cost` tells what a
card would take on a table now, :func:`table_of` gives the view's table.
"""

from __future__ import annotations

from typing import ClassVar

from bot_sdk.bot import Bot
from games.anniversary.rules.anniversary_cards import (
    PASS,
    SWAP,
    Special,
    Table,
    insert_position,
    placement_cost,
    row_heads,
    target_row,
)
from games.anniversary.rules.anniversary_view import AnniversaryView
from referee.rules.core import Action, DecisionKind, View

__all__ = [
    "PASS",
    "SWAP",
    "AnniversaryBot",
    "AnniversaryView",
    "Special",
    "Table",
    "insert_position",
    "placement_cost",
    "row_heads",
    "table_of",
    "target_row",
]


def table_of(view: AnniversaryView) -> Table:
    """The rows with their "Block" and "7 nimmt!" cards, as the placement rules see them."""
    return Table(view.rows, view.blocked, view.sevens)


class AnniversaryBot(Bot):
    """A bot for the Anniversary variant: number cards, special cards, low cards' rows."""

    variants: ClassVar[tuple[str, ...]] = ("anniversary",)

    def decide(self, view: View) -> Action:
        assert isinstance(view, AnniversaryView) and view.decision is not None
        kind = view.decision.kind
        if kind is DecisionKind.CARD:
            return self.choose_card(view)
        if kind is DecisionKind.ROW:
            return self.choose_row(view)
        if view.phase == "take":
            return self.choose_take(view)
        return self.choose_special(view)

    def choose_card(self, view: AnniversaryView) -> int:
        """The number card to play this turn; ``view.hand`` holds the choices."""
        raise NotImplementedError

    def choose_special(self, view: AnniversaryView) -> Action:
        """Before ``view.placing`` is placed: a special card from ``view.decision.options``, or ``()``."""
        return PASS

    def choose_take(self, view: AnniversaryView) -> Action:
        """After taking ``view.taken``: "Negative = Positive" or a swap from the options, or ``()``."""
        return PASS

    def choose_row(self, view: AnniversaryView) -> int:
        """The row a low card takes; by default the open row with the fewest bull heads."""
        assert view.decision is not None
        rows = [r for r in view.decision.options if isinstance(r, int)]
        return min(rows, key=lambda r: (row_heads(view.rows[r]), r))
