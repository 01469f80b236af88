"""Replays for the viewer: a stored transcript stepped through, seen by everyone or by one seat.

A frame is the match after a number of steps (0: nothing dealt yet). The omniscient frame holds
every seat's view and the step's actions, chance included (the whole deal). A seat's frame holds
only what the rules engine gives that seat, ``variant.view(state, seat)``, and the step's events,
which are public by construction: never the actions, never another seat's view.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

from games.replay_text import event_lines, field_text, row_name, seat_name
from referee.rules.core import Action, Event, Variant, event_to_json
from referee.rules.errors import TranscriptError
from referee.rules.spec import game_of, resolve
from referee.rules.transcript import Transcript, replay_states

_log = logging.getLogger("sixnimmt.games")

HIDDEN = ("hand", "screen")
"""The view fields that hold a seat's secret cards or tiles (every game's view names them so)."""


@lru_cache(maxsize=64)
def renderer(variant: str) -> ModuleType | None:
    """The replay module of the game that plays ``variant`` (its ``GameSpec.replay``), or None:
    a game without one is shown by the generic board and lines alone. Each hook is optional:

    - ``bulls(variant) -> tuple[int, ...] | None``: bull heads by card number;
    - ``describe(kind, fields, who, names, before) -> str | None``: an event's line (``before``:
      the step's earlier events as JSON), None for the generic line;
    - ``board(laid, frame, views, names) -> set[str]``: adds the game's part to the laid-out frame
      and returns the view fields it shows;
    - ``option_text(kind, option, view, names) -> str | None``: a pending decision's option in
      the words a person at the table uses (:func:`option_labels`), None for the generic label;
    - ``costs(view) -> list[int | None] | None``: what taking each row would cost the seat now
      (bull heads in classic), None where the game's rows cost nothing of the kind.
    """
    game = game_of(variant)
    if game is not None and game.replay:
        try:
            module: ModuleType = resolve(game.replay)
        except Exception as error:  # the generic board still shows the game
            message = str(error).splitlines()[0] if str(error) else ""
            _log.warning("game %r: its replay %s failed to load: %s: %s", game.name, game.replay,
                         type(error).__name__, message)  # fmt: skip
            return None
        return module
    return None


@dataclass(frozen=True, slots=True)
class Replay:
    """Every state of a match, from before the deal to the end, and each step's events."""

    transcript: Transcript
    variant: Variant[Any, Any]
    states: tuple[Any, ...]
    events: tuple[tuple[Event, ...], ...]
    fault_steps: tuple[dict[str, list[int]], ...] = ()
    """Per seat: each fault kind → the replay steps (frames) where a fault of it happened, first
    first; empty where they are not known (:func:`fault_steps`)."""

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
            "lines": describe_all(events, names, self.variant.name),
        }
        if any(self.fault_steps):  # public, as the seats' fault kinds and counts are
            frame["fault_steps"] = list(self.fault_steps)
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
        """Bull heads by card number for the card games with bull heads on their cards, else None."""
        hook = getattr(renderer(self.variant.name), "bulls", None)
        return None if hook is None else hook(self.variant)  # type: ignore[no-any-return]


def load(body: str) -> Replay:
    """Replay a stored transcript; a broken one raises :class:`TranscriptError`."""
    try:
        transcript = Transcript.from_json(json.loads(body))
    except ValueError as exc:
        raise TranscriptError(f"malformed transcript: {exc}") from exc
    return of(transcript)


def of(transcript: Transcript) -> Replay:
    """Replay a parsed transcript; one that does not replay raises :class:`TranscriptError`."""
    variant, states, events = replay_states(transcript)
    return Replay(transcript, variant, tuple(states), tuple(events), fault_steps(transcript, variant, states))


MAX_FAULT_STEPS = 64
"""Steps kept per seat and fault kind (a forfeited seat's defaults are not faults of their own)."""


def fault_steps(
    transcript: Transcript, variant: Variant[Any, Any], states: Sequence[Any]
) -> tuple[dict[str, list[int]], ...]:
    """Per seat, each fault kind → the steps where it happened: the frame that shows the step
    whose action the fault defaulted (a match page links each fault there).

    The referee's transcript says it in ``meta.fault_steps`` (per seat, ``{"step", "kind"}``
    items). An older transcript does not: there a seat with faults of one kind only gets the
    steps of its defaulted decisions (those whose action is the default action), when they are
    exactly as many as ``meta.defaulted`` says (none of the bot's own answers was the default);
    otherwise nothing, rather than a step that may be wrong.
    """
    players = variant.players
    meta = transcript.meta if isinstance(transcript.meta, Mapping) else {}
    told = meta.get("fault_steps")
    if isinstance(told, list) and len(told) == players:
        out: list[dict[str, list[int]]] = []
        for items in told:
            steps: dict[str, list[int]] = {}
            for item in items if isinstance(items, list) else ():
                if not isinstance(item, dict):
                    continue
                step, kind = item.get("step"), item.get("kind")
                if isinstance(step, int) and 0 < step <= len(transcript.steps) and isinstance(kind, str):
                    kept = steps.setdefault(kind, [])
                    if len(kept) < MAX_FAULT_STEPS:
                        kept.append(step)
            out.append({kind: sorted(found) for kind, found in steps.items()})
        return tuple(out)
    faults, defaulted = meta.get("faults"), meta.get("defaulted")
    if not (
        isinstance(faults, list) and isinstance(defaulted, list) and len(faults) == len(defaulted) == players
    ):
        return ()
    out = [{} for _ in range(players)]
    for seat in range(players):
        kinds = faults[seat] if isinstance(faults[seat], dict) else {}
        if len(kinds) != 1 or not isinstance(defaulted[seat], int) or defaulted[seat] < 1:
            continue
        found = _defaulted_steps(transcript, variant, states, seat)
        if len(found) == defaulted[seat]:
            (kind,) = kinds
            out[seat] = {str(kind): found[:MAX_FAULT_STEPS]}
    return tuple(out)


def _defaulted_steps(
    transcript: Transcript, variant: Variant[Any, Any], states: Sequence[Any], seat: int
) -> list[int]:
    """The steps (frames) where ``seat`` played its decision's default action."""
    found = []
    for index, actions in enumerate(transcript.steps):
        action = dict(actions).get(seat)
        if action is None:
            continue
        decision = next((d for d in variant.pending(states[index]) if d.seat == seat), None)
        if decision is not None and action == variant.default_action(states[index], decision):
            found.append(index + 1)
    return found


def _plain(action: Action) -> Any:
    return [_plain(a) for a in action] if isinstance(action, tuple) else action


def describe_all(events: Sequence[Event], names: Sequence[str], variant: str = "") -> list[str]:
    """One line for each of a step's events (its game's line where it has one)."""
    hook = getattr(renderer(variant), "describe", None) if variant else None
    return event_lines(events, names, hook)


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
                "name": seat_name(names, seat),
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
            played += [{"card": c, "seat": s, "name": seat_name(names, s)} for c, s in event["plays"]]
        elif event["type"] in ("CardPlayed", "CardTurned"):
            seat = event["seat"]
            played.append({"card": event["card"], "seat": seat, "name": seat_name(names, seat)})
        if event.get("taken") and event.get("bulls"):
            penalties.append(
                {"seat": event["seat"], "name": seat_name(names, event["seat"]), "cards": event["taken"]}
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
    laid["costs"] = row_costs(str(frame.get("variant", "")), public)
    hook = getattr(renderer(str(frame.get("variant", ""))), "board", None)
    if hook is not None:
        shown |= hook(laid, frame, views, names)
    extra = {k: v for k, v in public.items() if k not in shown and v not in (None, [], {})}
    laid["extra"] = {k: field_text(v) for k, v in extra.items()}
    return laid


def _per_seat(value: Any, players: int) -> bool:
    return isinstance(value, list) and len(value) == players and all(isinstance(v, list) for v in value)


def _hidden(view: dict[str, Any] | None) -> list[Any] | None:
    if view is None:
        return None
    for key in HIDDEN:
        if key in view:
            return list(view[key])
    return None


def row_costs(variant: str, view: Mapping[str, Any]) -> list[int | None] | None:
    """Per row of ``view``, what the seat would take if it took that row now, from the view alone:
    the bull heads of its cards in classic and the anniversary edition, its cards in Junior where
    the fewest collected cards win; None for a game whose rows cost nothing of the kind (its
    replay module has no ``costs`` hook, or the hook says None or fails)."""
    hook = getattr(renderer(variant), "costs", None)
    if hook is None:
        return None
    try:
        costs = hook(view)
    except Exception as error:  # a plugin game's bug must not stop its board
        _log.warning("variant %r: its replay's costs failed: %s: %s", variant, type(error).__name__, error)
        return None
    return None if costs is None else list(costs)


def option_labels(
    variant: str, view: Mapping[str, Any], options: Sequence[Action], names: Sequence[str]
) -> list[str]:
    """One short label per legal option of the seat's pending decision, in the options' order, in
    the words a person at the table uses: rows (spaces, places) counted from 1, cards and tiles by
    their numbers, special cards by their names. ``view`` is the seat's ``view.to_json()`` (its
    ``decision`` says the kind); ``options`` may be actions or their JSON form (lists).

    The game's replay module words its options (``option_text``); the rest get a generic label
    from the decision's kind. Two options never read the same: a label met twice gets the option
    itself appended.
    """
    decision = view.get("decision")
    kind = str(decision.get("kind", "")) if isinstance(decision, Mapping) else ""
    hook = getattr(renderer(variant), "option_text", None)
    labels = []
    for raw in options:
        option = _action(raw)
        try:
            text = None if hook is None else hook(kind, option, view, names)
        except Exception as error:  # a plugin game's bug must not keep a person from deciding
            _log.warning("variant %r: its replay's option_text failed on %r: %s: %s", variant, option,
                         type(error).__name__, error)  # fmt: skip
            text = None
        labels.append(str(text) if text else generic_option_text(kind, option))
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    return [
        f"{label} [{field_text(_plain(option))}]" if seen[label] > 1 else label
        for label, option in zip(labels, map(_action, options), strict=True)
    ]


def generic_option_text(kind: str, option: Action) -> str:
    """An option's label from its decision kind alone (a plugin game without ``option_text``)."""
    numbers = list(option) if isinstance(option, tuple) else [option]
    if kind == "row" and isinstance(option, int):
        return row_name(option).capitalize()
    if kind == "card" and isinstance(option, int):
        return f"Play {option}"
    if kind == "card_row" and len(numbers) == 2:
        return f"Put {numbers[0]} in {row_name(numbers[1])}"
    if kind == "cards":
        return "Play " + " and ".join(map(str, numbers))
    if kind == "pile" and isinstance(option, int):
        return f"Take from pile {option}"
    if kind in ("luck", "action_card"):
        if not numbers:
            return "Pass"
        card, *targets = numbers
        on = f" on {' '.join(map(str, targets))}" if targets else ""
        return f"Card {card}{on}"
    return f"Choose {field_text(_plain(option))}"


def _action(option: Any) -> Action:
    """An action from itself or its JSON form (lists for tuples)."""
    if isinstance(option, (list, tuple)):
        return tuple(int(x) for x in option)
    return int(option)
