"""Classic 6 nimmt!'s replay for the dashboard: its event lines and bull heads. Dashboard layer:
``dashboard.replay`` finds it through the game's ``GameSpec.replay``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.replay_text import cards_text, seat_name
from referee.rules.cards import bull_heads, bull_table
from referee.rules.core import Action, Variant


def bulls(variant: Variant[Any, Any]) -> tuple[int, ...]:
    """Bull heads by card number, up to the deck's top card."""
    return bull_table(int(variant.config.top_card))


def costs(view: Mapping[str, Any]) -> list[int]:
    """The bull heads each row would cost the seat if it took the row now."""
    return [sum(bull_heads(card) for card in row) for row in view.get("rows", [])]


def heads_text(heads: int) -> str:
    """``1 bull head``, ``5 bull heads``."""
    return f"{heads} bull head{'' if heads == 1 else 's'}"


def option_text(kind: str, option: Action, view: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """An option of a classic decision in words: the card to play, the row a low card takes
    (with what it costs); None for the generic label."""
    if kind == "card" and isinstance(option, int):
        return f"Play {option}"
    if kind == "row" and isinstance(option, int):
        rows = view.get("rows", [])
        cost = f" ({heads_text(costs(view)[option])})" if 0 <= option < len(rows) else ""
        return f"Take row {option + 1}{cost}"
    return None


def describe(
    kind: str, fields: dict[str, Any], who: str, names: Sequence[str], before: Sequence[dict[str, Any]] = ()
) -> str | None:
    """The line of a classic event (None: the generic line)."""
    if kind == "HandDealt":
        rows = " | ".join(cards_text(r) for r in fields["rows"])
        return f"Hand {fields['hand']} dealt; the rows start with {rows}"
    if kind == "CardsRevealed":
        plays = ", ".join(f"{seat_name(names, s)} {c}" for c, s in fields["plays"])
        return f"Turn {fields['turn']}: cards revealed: {plays}"
    if kind == "RowChosen":
        return f"{who} chose row {fields['row'] + 1} for the low card {fields['card']}"
    if kind == "CardPlaced" and "taken" in fields:
        end = "the left end of " if fields.get("left") else ""
        if fields["taken"]:
            return (
                f"{who}'s {fields['card']} takes row {fields['row'] + 1} ({cards_text(fields['taken'])}):"
                f" {fields['bulls']} bull heads"
            )
        return f"{who}'s {fields['card']} goes to {end}row {fields['row'] + 1}"
    if kind == "HandScored":
        parts = ", ".join(
            f"{seat_name(names, s)} +{b} ({t})"
            for s, (b, t) in enumerate(zip(fields["bulls"], fields["totals"], strict=True))
        )
        return f"Hand {fields['hand']} scored: {parts}"
    return None
