"""The words every game's replay lines are made of: a seat's name and a list of cards.

The games' replay modules (``games/<name>/replay.py``) and the dashboard's generic replay
(``dashboard.replay``) write their event lines with them. They sit below both, as pure as the
rules (import-linter holds this module to the rules' contract), so a game's replay never imports
the dashboard, the host that loads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules.core import CHANCE


def seat_name(names: Sequence[str], seat: int) -> str:
    """A seat's name in a replay (``chance`` for the chance pseudo-seat)."""
    if seat == CHANCE:
        return "chance"
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def cards_text(cards: Sequence[int]) -> str:
    """Cards as numbers separated by spaces."""
    return " ".join(str(c) for c in cards)
