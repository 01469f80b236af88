"""6 nimmt! Junior's replay: its event lines, with rows counted as people count them (row 1 is
the first). Dashboard layer: ``dashboard.replay`` and ``sixnimmt replay`` find it through the
game's ``GameSpec.replay``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.replay_text import cards_text, row_name
from referee.rules.core import Action


def option_text(kind: str, option: Action, view: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """An option of a Junior decision in words: the card to play, the row the card goes to (the
    turned-over or played card, in every mode); None for the generic label."""
    if kind == "card" and isinstance(option, int):
        return f"Play {option}"
    if kind == "row" and isinstance(option, int):
        card = view.get("card")
        return f"Put {card} in {row_name(option)}" if card is not None else f"Choose {row_name(option)}"
    if kind == "card_row" and isinstance(option, tuple) and len(option) == 2:
        return f"Put {option[0]} in {row_name(option[1])}"
    return None


def costs(view: Mapping[str, Any]) -> list[int] | None:
    """Where the fewest collected cards win (the experts' game, the advanced game with
    ``nuisance``): the cards each row would add to the seat's pile if it collected the row now
    (each card counts one); None where collecting is good."""
    if not view.get("fewest_wins"):
        return None
    return [len(row) for row in view.get("rows", [])]


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
