"""The anniversary variant's replay for the dashboard: its event lines, bull heads, and its part of
the board (row flags, special cards, swaps, set-asides). Dashboard layer: ``dashboard.replay``
finds it through the game's ``GameSpec.replay``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.anniversary.rules.anniversary_cards import SWAP, Special, Table, target_row
from games.replay_text import cards_text, seat_name
from referee.rules.cards import bull_heads, bull_table
from referee.rules.core import Action, Variant

SPECIALS = {
    Special.FIFTH_ROW: "5th Row",
    Special.SEVEN_NIMMT: "7 nimmt!",
    Special.INSERT: "Insert",
    Special.REPLACE: "Replace",
    Special.SHIFT: "Shift",
    Special.NEGATIVE_POSITIVE: "Negative = Positive",
    Special.BLOCK: "Block",
}
"""The anniversary variant's special cards by kind, as the edition names them."""


def bulls(variant: Variant[Any, Any]) -> tuple[int, ...]:
    """Bull heads by card number, up to the deck's highest card."""
    return bull_table(int(variant.config.deck))


def costs(view: Mapping[str, Any]) -> list[int]:
    """The bull heads each row would cost the seat if it took the row now (its number cards'; a
    5th row that a take closes leaves with the played card too, whose heads come on top)."""
    return [sum(bull_heads(card) for card in row) for row in view.get("rows", [])]


def special_name(kind: int) -> str:
    """An anniversary special card's name (its kind as a number)."""
    try:
        return SPECIALS[Special(kind)]
    except ValueError:
        return f"special card {kind}"


def option_text(kind: str, option: Action, view: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """An option of an anniversary decision in words: the card to play, the row a low card takes
    (with its bull heads), a special card with its target before the card being placed, and after
    a take "Negative = Positive" on a taken card or a special card swapped; None for the generic
    label."""
    rows = view.get("rows", [])
    if kind == "card" and isinstance(option, int):
        return f"Play {option}"
    if kind == "row" and isinstance(option, int):
        heads = costs(view)[option] if 0 <= option < len(rows) else 0
        return f"Take row {option + 1} ({heads} bull head{'' if heads == 1 else 's'})"
    if kind != "action_card" or not isinstance(option, tuple):
        return None
    taking = view.get("phase") == "take"
    if not option:
        return "Pass: no set-aside, no swap" if taking else "No special card"
    code, *targets = option
    if code == SWAP and targets:
        return f"Swap a {special_name(targets[0])} card"
    what = special_name(code)
    placing = view.get("placing") or [None]
    card = placing[0]
    if code == Special.FIFTH_ROW:
        return f"{what}: {card} starts row {len(rows) + 1}"
    if code == Special.SEVEN_NIMMT:
        return f"{what}: {card} goes sixth into {_goes_to(view, card)}"
    if code == Special.INSERT and targets:
        return f"{what}: {card} into row {targets[0] + 1}"
    if code == Special.REPLACE and targets:
        return f"{what}: {targets[0]} instead of {card}"
    if code == Special.SHIFT and len(targets) == 2:
        return f"{what}: {targets[0]} to row {targets[1] + 1}"
    if code == Special.NEGATIVE_POSITIVE and targets:
        return f"{what} on {targets[0]}"
    if code == Special.BLOCK and targets:
        return f"{what}: row {targets[0] + 1}"
    return None


def _goes_to(view: Mapping[str, Any], card: Any) -> str:
    """The row ``card`` goes to by rules 1 and 2 (``its row`` where the view does not say)."""
    rows = view.get("rows", [])
    blocked, sevens = view.get("blocked", []), view.get("sevens", [])
    if not isinstance(card, int) or not (len(rows) == len(blocked) == len(sevens)):
        return "its row"
    row = target_row(Table(tuple(map(tuple, rows)), tuple(blocked), tuple(sevens)), card)
    return f"row {row + 1}" if row >= 0 else "its row"


def _special_before(before: Sequence[dict[str, Any]]) -> int | None:
    """The special card played since the step's last placed card (what the next card does)."""
    for fields in reversed(before):
        if fields.get("type") == "CardPlaced":
            return None
        if fields.get("type") == "SpecialPlayed":
            return int(fields["kind"])
    return None


def describe(
    kind: str, fields: dict[str, Any], who: str, names: Sequence[str], before: Sequence[dict[str, Any]] = ()
) -> str | None:
    """The line of an anniversary event; a card placed after a special card says what it did."""
    special = _special_before(before)
    if kind == "CardsRevealed":
        plays = ", ".join(f"{seat_name(names, s)} {c}" for c, s in fields["plays"])
        return f"Turn {fields['turn']}: cards revealed: {plays}"
    if kind == "RowChosen":
        return f"{who} chose row {fields['row'] + 1} for the low card {fields['card']}"
    if kind == "RoundDealt":
        rows = " | ".join(cards_text(r) for r in fields["rows"])
        counts = fields["specials"]
        if len(set(counts)) == 1:
            held = f"each seat holds {counts[0]} special cards"
        else:
            held = f"special cards held: {cards_text(counts)}"
        return f"Round {fields['round']} dealt; the rows start with {rows}; {held}"
    if kind == "SpecialPlayed":
        targets = fields["targets"]
        what = special_name(fields["kind"])
        if fields["kind"] in (Special.INSERT, Special.BLOCK):
            return f"{who} plays {what} on row {targets[0] + 1}"
        if fields["kind"] == Special.REPLACE:
            return f"{who} plays {what}: {targets[0]} from the hand instead"
        if fields["kind"] == Special.SHIFT:
            return f"{who} plays {what}: {targets[0]} moves to row {targets[1] + 1}"
        if fields["kind"] == Special.NEGATIVE_POSITIVE:
            return f"{who} plays {what} on the taken {targets[0]}"
        return f"{who} plays {what}"
    if kind == "CardShifted":
        return (
            f"{fields['card']} moves from row {fields['from_row'] + 1} to place {fields['position'] + 1}"
            f" of row {fields['row'] + 1}"
        )
    if kind == "CardPlaced" and "position" in fields:
        card, row = fields["card"], fields["row"] + 1
        if fields["taken"]:
            closed = "; the row leaves the table" if fields["closed"] else ""
            taken = cards_text(fields["taken"])
            return f"{who}'s {card} takes row {row} ({taken}): {fields['bulls']} bull heads{closed}"
        if special == Special.FIFTH_ROW:
            return f"{who}'s {card} starts a new row {row} (5th Row)"
        if special == Special.SEVEN_NIMMT:
            return f"{who}'s {card} goes sixth into row {row}, the 7 nimmt! card seventh"
        if special == Special.INSERT:
            return f"{who}'s {card} is inserted into row {row} at place {fields['position'] + 1}"
        return f"{who}'s {card} goes to row {row}"
    if kind == "BlocksRemoved":
        rows = ", ".join(str(r + 1) for r in fields["rows"])
        many = len(fields["rows"]) != 1
        return f"A row was taken: the Block card{'s leave rows' if many else ' leaves row'} {rows}"
    if kind == "CardsSetAside":
        return (
            f"{who}'s Negative = Positive on {fields['card']}: {cards_text(fields['cards'])} set aside,"
            f" {fields['bulls']} bull heads fewer"
        )
    if kind == "SpecialSwapped":
        return f"{who} swaps a {special_name(fields['kind'])} card for the special deck's top card"
    if kind == "SpecialDrawn":
        return f"{who} draws a special card"
    if kind == "SpecialsReshuffled":
        return f"The special deck ran out: {fields['cards']} face-up special cards shuffled into a new one"
    if kind == "RoundScored":
        parts = ", ".join(
            f"{seat_name(names, s)} +{b} ({t})"
            for s, (b, t) in enumerate(zip(fields["bulls"], fields["totals"], strict=True))
        )
        return f"Round {fields['round']} scored: {parts}"
    return None


def _special(kind: int) -> dict[str, Any]:
    return {"kind": kind, "name": special_name(kind)}


def board(laid: dict[str, Any], frame: dict[str, Any], views: list[dict[str, Any]],
                 names: Sequence[str]) -> set[str]:  # fmt: skip
    """The anniversary variant's part of the page: each row's Block and 7 nimmt! cards, each seat's
    special cards (its own; the others' as a count), the special cards played, swapped and drawn
    this step, the cards Negative = Positive set aside, the special deck and its face-up pile.
    Returns the view fields it shows."""
    public = views[0]
    omniscient = frame["seat"] is None
    blocked, sevens = public.get("blocked", []), public.get("sevens", [])
    laid["marks"] = [
        {"blocked": bool(blocked[r]) if r < len(blocked) else False,
         "seven": bool(sevens[r]) if r < len(sevens) else False}
        for r in range(len(laid["rows"]))
    ]  # fmt: skip
    counts = public.get("special_counts", [])
    played_now = public.get("played", [])
    for panel in laid["panels"]:
        seat = panel["seat"]
        own = views[seat] if omniscient else (frame["view"] if seat == frame["seat"] else None)
        panel["specials"] = None if own is None else [_special(k) for k in own.get("specials", [])]
        panel["special_count"] = counts[seat] if seat < len(counts) else 0
        panel["played_now"] = played_now[seat] if seat < len(played_now) else 0
    placing = public.get("placing")
    specials: dict[str, Any] = {
        "placing": None
        if not placing
        else {"card": placing[0], "seat": placing[1], "name": seat_name(names, placing[1])},
        "taken": list(public.get("taken", [])),
        "set_aside": list(public.get("set_aside", [])),
        "discard": [_special(k) for k in public.get("discard", [])],
        "deck_size": public.get("deck_size", 0),
        "played": [],
        "set_asides": [],
    }
    for event in frame["events"]:
        seat = event.get("seat")
        who = seat_name(names, seat) if isinstance(seat, int) else ""
        if event["type"] == "SpecialPlayed":
            line = describe("SpecialPlayed", event, who, names)
            specials["played"].append(_special(event["kind"]) | {"name_of": who, "what": line})
        elif event["type"] == "SpecialSwapped":
            specials["played"].append(
                _special(event["kind"]) | {"name_of": who, "what": f"{who} swaps it for the deck's top card"}
            )
        elif event["type"] == "CardsSetAside":
            specials["set_asides"].append(
                {"name": who, "card": event["card"], "cards": event["cards"], "bulls": event["bulls"]}
            )
    laid["specials"] = specials
    return {"blocked", "sevens", "special_counts", "specials", "played", "placing", "taken", "set_aside",
            "discard", "deck_size", "round_no", "turn", "phase", "revealed"}  # fmt: skip
