"""The wire codec alone: what the referee spends converting views and events, and the SDK reading them.

Random games are played first and their views and events kept, so only the conversion is timed:
``wire.<game>.requests_per_s`` writes each pending seat's request (view included, the shared part
built once per step), ``wire.<game>.events_per_s`` a step's events; ``….reads_per_s`` turns the
requests' and events' messages back into domain values, as the SDK does. ``….request_bytes_per_s``
writes the same requests as the referee sends them, as bytes (``referee.wire.request_bytes``: no
message objects, the step's table encoded once); ``….requests_per_s`` builds them as messages
(without serializing them).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from referee import wire as default_wire
from referee.rules import CHANCE, Decision, Event, SeededChance, View, make_variant
from sixnimmt.v1 import game_pb2

GAMES: dict[str, tuple[str, dict[str, Any], int]] = {
    "classic.p4": ("classic", {"players": 4}, 12),
    "junior.experts.p4": ("junior-experts", {"players": 4}, 12),
    "board.pro.p4": ("board", {"players": 4, "pro": True, "luck": True}, 6),
    "anniversary.p4": ("anniversary", {"players": 4}, 12),
}
"""Bench name → (variant, config, games)."""


class Steps:
    """What a referee converts in a few games: each step's pending seats and views, and its events.

    (A plain class: ``bench/run.py`` loads this file without a module entry a dataclass needs.)
    """

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.asks: list[list[tuple[Decision, View]]] = []
        self.events: list[tuple[Event, ...]] = []


def record(variant: str, config: dict[str, Any], games: int) -> Steps:
    """The pending seats' views and the events of every step of a few random games."""
    steps = Steps(variant)
    for seed in range(games):
        game = make_variant(variant, config)
        rng, chance = random.Random(seed), SeededChance(seed)
        state = game.initial_state()
        while pending := game.pending(state):
            if pending[0].seat == CHANCE:
                actions = {CHANCE: game.sample_chance(state, chance)}
            else:
                steps.asks.append([(d, game.view(state, d.seat)) for d in pending])
                actions = {d.seat: rng.choice(d.options) for d in pending}
            state, events = game.apply(state, actions)
            steps.events.append(events)
    return steps


def _best(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(steps: Steps, wire: ModuleType = default_wire, repeats: int = 5) -> dict[str, float]:
    """Requests, events and reads per second (the best of ``repeats`` passes over the steps)."""
    request_to_wire, events_to_wire = wire.request_to_wire, wire.events_to_wire
    variant = steps.variant
    requests = sum(len(ask) for ask in steps.asks)
    events = sum(len(e) for e in steps.events)

    def write_requests() -> None:
        for ask in steps.asks:
            for decision, view in ask:
                request_to_wire(1, "m", variant, decision, view, 2000, 10_000, game_pb2.DecisionRequest())

    def write_events() -> None:
        for step, batch in enumerate(steps.events):
            events_to_wire(variant, "m", step, batch, [])

    sent_requests = []
    for ask in steps.asks:
        for decision, view in ask:
            out = game_pb2.DecisionRequest()
            request_to_wire(1, "m", variant, decision, view, 2000, 10_000, out)
            sent_requests.append(out)
    sent_events: list[game_pb2.MatchEvent] = []
    for step, batch in enumerate(steps.events):
        events_to_wire(variant, "m", step, batch, sent_events)

    def read() -> None:
        view_from_wire, event_from_wire = wire.view_from_wire, wire.event_from_wire
        for message in sent_requests:
            view_from_wire(message)
        for event in sent_events:
            event_from_wire(event)

    def request_bytes() -> None:
        for ask in steps.asks:
            for decision, view in ask:
                wire.request_bytes(1, "m", variant, decision, view, 2000, 10_000)

    return {
        "requests_per_s": requests / _best(write_requests, repeats),
        "request_bytes_per_s": requests / _best(request_bytes, repeats),
        "events_per_s": events / _best(write_events, repeats),
        "reads_per_s": (requests + events) / _best(read, repeats),
    }


def run(quick: bool) -> Iterator[dict[str, Any]]:
    for name, (variant, config, games) in GAMES.items():
        figures = measure(record(variant, config, 2 if quick else games), repeats=2 if quick else 7)
        for figure, value in figures.items():
            unit = (
                "messages/s"
                if figure == "reads_per_s"
                else "requests/s"
                if "request" in figure
                else "events/s"
            )
            yield {"name": f"wire.{name}.{figure}", "value": round(value), "unit": unit}
