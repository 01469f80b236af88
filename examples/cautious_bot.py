"""An example bot: play the card that lands safely, else lose as few bull heads as possible.

Run it:  sixnimmt play --bots examples/cautious_bot.py,random,random,random --games 20
"""

from __future__ import annotations

from bot_sdk import ClassicBot, ClassicView
from bot_sdk.bot import row_heads


class CautiousBot(ClassicBot):
    """Prefers a card that goes right behind a short row's last card."""

    def choose_card(self, view: ClassicView) -> int:
        def risk(card: int) -> tuple[int, int]:
            fitting = [row for row in view.rows if row[-1] < card]
            if not fitting:
                # A low card takes the cheapest row: that's the cost.
                return min(row_heads(row) for row in view.rows), card
            row = max(fitting, key=lambda r: r[-1])
            if len(row) >= view.row_capacity:
                return row_heads(row), card
            # Safe for now; a small gap and a short row keep it safe when others play too.
            gap = card - row[-1]
            return 0, gap + 10 * len(row)

        return min(view.hand, key=risk)
