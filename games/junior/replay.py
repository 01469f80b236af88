"""6 nimmt! Junior's replay: its event lines, with rows counted as people count them (row 1 is
the first). Dashboard layer: ``dashboard.replay`` and ``sixnimmt replay`` find it through the
game's ``GameSpec.replay``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.replay_text import cards_text, row_name


def describe(
    kind: str, fields: dict[str, Any], who: str, names: Sequence[str], before: Sequence[dict[str, Any]] = ()
) -> str | None:
    """The line of a Junior event (None: the generic line)."""
    if kind == "CardsDealt":
        rows = ", ".join(f"{row_name(r)}: {cards_text(c)}" for r, c in enumerate(fields["rows"]) if c)
        dealt = f"Each seat is dealt {fields['hand_size']} cards"
        return f"{dealt}; the rows start with {rows}" if rows else dealt
    if kind == "CardTurned":
        return f"{who} turns over card {fields['card']}"
    if kind == "CardDrawn":
        return f"{who} draws a card; {fields['pile']} left in the pile"
    if kind == "CardPlayed":
        return f"{who} plays card {fields['card']}"
    if kind == "CardPlaced":
        return f"{who}'s card {fields['card']} goes to {row_name(fields['row'])}"
    if kind == "RowCollected":
        return (
            f"{who} collects {row_name(fields['row'])} ({cards_text(fields['cards'])}):"
            f" {fields['total']} card{'' if fields['total'] == 1 else 's'} in all"
        )
    return None
