"""Replays for the viewer: a stored transcript stepped through, seen by everyone or by one seat.

A frame is the match after a number of steps (0: nothing dealt yet). The omniscient frame holds
every seat's view and the step's actions, chance included (the whole deal). A seat's frame holds
only what the rules engine gives that seat, ``variant.view(state, seat)``, and the step's events,
which are public by construction: never the actions, never another seat's view.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.rules.anniversary_cards import Special
from referee.rules.cards import bull_table
from referee.rules.core import CHANCE, Action, Event, Variant, event_to_json
from referee.rules.errors import TranscriptError
from referee.rules.transcript import Transcript, replay_states

HIDDEN = ("hand", "screen")
"""The view fields that hold a seat's secret cards or tiles (classic and junior; Brettspiel)."""

BULL_HEADS = {"classic": "top_card", "anniversary": "deck"}
"""The card games with bull heads on their cards, and the config field of their highest card."""

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


@dataclass(frozen=True, slots=True)
class Replay:
    """Every state of a match, from before the deal to the end, and each step's events."""

    transcript: Transcript
    variant: Variant[Any, Any]
    states: tuple[Any, ...]
    events: tuple[tuple[Event, ...], ...]

    @property
    def steps(self) -> int:
        return len(self.transcript.steps)

    @property
    def players(self) -> int:
        return self.variant.players

    def frame(self, step: int, seat: int | None, names: Sequence[str]) -> dict[str, Any]:
        """The match after ``step`` steps, for everyone (``seat`` None) or for one seat."""
        if not 0 <= step <= self.steps:
            raise IndexError(f"no step {step}: the match has {self.steps}")
        state = self.states[step]
        events = self.events[step - 1] if step else ()
        frame: dict[str, Any] = {
            "variant": self.variant.name,
            "step": step,
            "steps": self.steps,
            "seat": seat,
            "events": [event_to_json(e) for e in events],
            "lines": describe_all(events, names),
        }
        if seat is None:
            actions = self.transcript.steps[step - 1] if step else ()
            frame["actions"] = [{"seat": s, "action": _plain(a)} for s, a in actions]
            frame["seats"] = [self.variant.view(state, s).to_json() for s in range(self.players)]
            outcome = self.variant.outcome(state)
            frame["outcome"] = None if outcome is None else outcome.to_json()
        else:
            frame["view"] = self.variant.view(state, seat).to_json()
            frame["outcome"] = None
            if step == self.steps and (outcome := self.variant.outcome(state)) is not None:
                frame["outcome"] = outcome.to_json()  # the result is public once the game is over
        return frame

    def bulls(self) -> tuple[int, ...] | None:
        """Bull heads by card number for the card games with bull heads (classic, anniversary), else None."""
        top = BULL_HEADS.get(self.variant.name)
        if top is None:
            return None
        return bull_table(int(getattr(self.variant.config, top)))


def load(body: str) -> Replay:
    """Replay a stored transcript; a broken one raises :class:`TranscriptError`."""
    try:
        transcript = Transcript.from_json(json.loads(body))
    except ValueError as exc:
        raise TranscriptError(f"malformed transcript: {exc}") from exc
    variant, states, events = replay_states(transcript)
    return Replay(transcript, variant, tuple(states), tuple(events))


def _plain(action: Action) -> Any:
    return [_plain(a) for a in action] if isinstance(action, tuple) else action


def _name(names: Sequence[str], seat: int) -> str:
    if seat == CHANCE:
        return "chance"
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def _cards(cards: Sequence[int]) -> str:
    return " ".join(str(c) for c in cards)


def special_name(kind: int) -> str:
    """An anniversary special card's name (its kind as a number)."""
    try:
        return SPECIALS[Special(kind)]
    except ValueError:
        return f"special card {kind}"


def describe_all(events: Sequence[Event], names: Sequence[str]) -> list[str]:
    """One line for each of a step's events; a card placed after a special card says what it did."""
    lines = []
    special: int | None = None
    for event in events:
        lines.append(describe(event, names, special))
        kind = type(event).__name__
        if kind == "SpecialPlayed":
            special = event._asdict()["kind"]
        elif kind == "CardPlaced":
            special = None
    return lines


def describe(event: Event, names: Sequence[str], special: int | None = None) -> str:
    """One line of plain text for an event, with seat names (the page escapes it).

    ``special``: the special card played just before this event (the anniversary variant), which
    tells a 5th row, an inserted card or a 7 nimmt! from a card placed by the rules.
    """
    return describe_fields(type(event).__name__, event_to_json(event), names, special)


def describe_fields(
    kind: str, fields: dict[str, Any], names: Sequence[str], special: int | None = None
) -> str:
    """:func:`describe` of an event given as its type's name and its JSON form (:func:`event_to_json`)."""
    seat = fields.get("seat")
    who = _name(names, seat) if isinstance(seat, int) else ""
    line = _anniversary_line(kind, fields, who, names, special)
    if line is not None:
        return line
    if kind == "HandDealt":
        rows = " | ".join(_cards(r) for r in fields["rows"])
        return f"Hand {fields['hand']} dealt; the rows start with {rows}"
    if kind == "CardsRevealed":
        plays = ", ".join(f"{_name(names, s)} {c}" for c, s in fields["plays"])
        return f"Turn {fields['turn']}: cards revealed: {plays}"
    if kind == "RowChosen":
        return f"{who} chose row {fields['row'] + 1} for the low card {fields['card']}"
    if kind == "CardPlaced" and "taken" in fields:
        end = "the left end of " if fields.get("left") else ""
        if fields["taken"]:
            return (
                f"{who}'s {fields['card']} takes row {fields['row'] + 1} ({_cards(fields['taken'])}):"
                f" {fields['bulls']} bull heads"
            )
        return f"{who}'s {fields['card']} goes to {end}row {fields['row'] + 1}"
    if kind == "HandScored":
        parts = ", ".join(
            f"{_name(names, s)} +{b} ({t})"
            for s, (b, t) in enumerate(zip(fields["bulls"], fields["totals"], strict=True))
        )
        return f"Hand {fields['hand']} scored: {parts}"
    if kind == "GameEnded":
        parts = ", ".join(
            f"{_name(names, s)} {score} (#{rank})"
            for s, (score, rank) in enumerate(zip(fields["scores"], fields["ranks"], strict=True))
        )
        return f"Game over ({str(fields['termination']).replace('_', ' ')}): {parts}"
    body = ", ".join(f"{k}={_text(v)}" for k, v in fields.items() if k not in ("type", "seat"))
    return f"{who + ': ' if who else ''}{kind} {body}".strip()


def _anniversary_line(
    kind: str, fields: dict[str, Any], who: str, names: Sequence[str], special: int | None
) -> str | None:
    """The line of an anniversary event (None for the events it shares with classic)."""
    if kind == "RoundDealt":
        rows = " | ".join(_cards(r) for r in fields["rows"])
        counts = fields["specials"]
        if len(set(counts)) == 1:
            held = f"each seat holds {counts[0]} special cards"
        else:
            held = f"special cards held: {_cards(counts)}"
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
            taken = _cards(fields["taken"])
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
            f"{who}'s Negative = Positive on {fields['card']}: {_cards(fields['cards'])} set aside,"
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
            f"{_name(names, s)} +{b} ({t})"
            for s, (b, t) in enumerate(zip(fields["bulls"], fields["totals"], strict=True))
        )
        return f"Round {fields['round']} scored: {parts}"
    return None


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (list, dict)) else str(value)


def board(frame: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The frame laid out for the page: the table, each seat's panel, what was played and taken.

    In a seat's frame, every other seat's hand is ``None`` (the page shows it face down): the
    panel holds only what that seat's own view holds.
    """
    omniscient = frame["seat"] is None
    views: list[dict[str, Any]] = frame["seats"] if omniscient else [frame["view"]]
    public = views[0]
    players = int(public.get("players", len(names)))
    scores = list(public.get("scores", []))
    piles = public.get("piles") if _per_seat(public.get("piles"), players) else public.get("collected")
    piles = piles if _per_seat(piles, players) else None
    panels = []
    for seat in range(players):
        own = views[seat] if omniscient else (frame["view"] if seat == frame["seat"] else None)
        panels.append(
            {
                "seat": seat,
                "name": _name(names, seat),
                "score": scores[seat] if seat < len(scores) else None,
                "hand": _hidden(own),
                "taken": list(piles[seat]) if piles is not None else None,
                "me": seat == frame["seat"],
            }
        )
    played: list[dict[str, Any]] = []
    penalties: list[dict[str, Any]] = []
    for event in frame["events"]:
        if isinstance(event.get("plays"), list):
            played += [{"card": c, "seat": s, "name": _name(names, s)} for c, s in event["plays"]]
        elif event["type"] in ("CardPlayed", "CardTurned"):
            played.append({"card": event["card"], "seat": event["seat"], "name": _name(names, event["seat"])})
        if event.get("taken") and event.get("bulls"):
            penalties.append(
                {"seat": event["seat"], "name": _name(names, event["seat"]), "cards": event["taken"]}
                | {"bulls": event["bulls"]}
            )
    shown = {"rows", "scores", "piles", "collected", "players", "seat", "decision", *HIDDEN}
    laid: dict[str, Any] = {
        "rows": public.get("rows", []),
        "marks": None,
        "phase": public.get("phase"),
        "hand_no": public.get("hand_no", public.get("round_no", public.get("round"))),
        "round": "Round" if "round_no" in public else "Hand",
        "turn": public.get("turn"),
        "panels": panels,
        "played": played,
        "penalties": penalties,
        "decision": None if omniscient else frame["view"].get("decision"),
        "specials": None,
    }
    if frame.get("variant") == "anniversary":
        shown |= _anniversary(laid, frame, views, names)
    laid["extra"] = {k: _text(v) for k, v in public.items() if k not in shown and v not in (None, [], {})}
    return laid


def _special(kind: int) -> dict[str, Any]:
    return {"kind": kind, "name": special_name(kind)}


def _anniversary(laid: dict[str, Any], frame: dict[str, Any], views: list[dict[str, Any]],
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
        else {"card": placing[0], "seat": placing[1], "name": _name(names, placing[1])},
        "taken": list(public.get("taken", [])),
        "set_aside": list(public.get("set_aside", [])),
        "discard": [_special(k) for k in public.get("discard", [])],
        "deck_size": public.get("deck_size", 0),
        "played": [],
        "set_asides": [],
    }
    for event in frame["events"]:
        seat = event.get("seat")
        who = _name(names, seat) if isinstance(seat, int) else ""
        if event["type"] == "SpecialPlayed":
            line = describe_fields("SpecialPlayed", event, names)
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


def _per_seat(value: Any, players: int) -> bool:
    return isinstance(value, list) and len(value) == players and all(isinstance(v, list) for v in value)


def _hidden(view: dict[str, Any] | None) -> list[Any] | None:
    if view is None:
        return None
    for key in HIDDEN:
        if key in view:
            return list(view[key])
    return None
