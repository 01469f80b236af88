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

from referee.rules.cards import bull_table
from referee.rules.core import CHANCE, Action, Event, Variant, event_to_json
from referee.rules.errors import TranscriptError
from referee.rules.transcript import Transcript, replay_states

HIDDEN = ("hand", "screen")
"""The view fields that hold a seat's secret cards or tiles (classic and junior; Brettspiel)."""


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
            "step": step,
            "steps": self.steps,
            "seat": seat,
            "events": [event_to_json(e) for e in events],
            "lines": [describe(e, names) for e in events],
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
        """Bull heads by card number for the card games with bull heads (classic), else None."""
        if self.variant.name != "classic":
            return None
        return bull_table(int(self.variant.config.top_card))


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


def describe(event: Event, names: Sequence[str]) -> str:
    """One line of plain text for an event, with seat names (the page escapes it)."""
    kind = type(event).__name__
    fields = event._asdict()
    seat = fields.get("seat")
    who = _name(names, seat) if isinstance(seat, int) else ""
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
    body = ", ".join(f"{k}={_text(v)}" for k, v in event_to_json(event).items() if k not in ("type", "seat"))
    return f"{who + ': ' if who else ''}{kind} {body}".strip()


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
    return {
        "rows": public.get("rows", []),
        "phase": public.get("phase"),
        "hand_no": public.get("hand_no", public.get("round")),
        "turn": public.get("turn"),
        "panels": panels,
        "played": played,
        "penalties": penalties,
        "decision": None if omniscient else frame["view"].get("decision"),
        "extra": {k: _text(v) for k, v in public.items() if k not in shown and v not in (None, [], {})},
    }


def _per_seat(value: Any, players: int) -> bool:
    return isinstance(value, list) and len(value) == players and all(isinstance(v, list) for v in value)


def _hidden(view: dict[str, Any] | None) -> list[Any] | None:
    if view is None:
        return None
    for key in HIDDEN:
        if key in view:
            return list(view[key])
    return None
