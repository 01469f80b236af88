"""Engine throughput: whole classic hands per second through the full engine API."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator
from typing import Any

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from referee.rules import CHANCE, SeededChance, make_variant


def engine_hands_per_s(players: int, seconds: float) -> float:
    """Random play through initial_state / pending / sample_chance / apply, one hand a game."""
    game = make_variant("classic", {"players": players, "hands": 1, "target": None})
    pending, apply, sample = game.pending, game.apply, game.sample_chance
    rr = random.Random(7).random
    hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            state = game.initial_state()
            chance = SeededChance(hands)
            while decisions := pending(state):
                if decisions[0].seat == CHANCE:
                    state, _ = apply(state, {CHANCE: sample(state, chance)})
                else:
                    state, _ = apply(
                        state, {d.seat: d.options[int(rr() * len(d.options))] for d in decisions}
                    )
            hands += 1
        now = time.perf_counter()
        if now >= deadline:
            return hands / (now - start)


def arena_hands_per_s(players: int, seconds: float) -> float:
    """The same with RandomBot objects in the local arena: views, bots, transcripts included."""
    game = make_variant("classic", {"players": players, "hands": 1, "target": None})
    bot = reference_bot("classic", "random")
    hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            play_match(game, [bot] * players, hands)
            hands += 1
    return hands / (time.perf_counter() - start)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    seconds = 0.3 if quick else 2.0
    repeats = 1 if quick else 3
    for players in (4, 10):
        value = statistics.median(engine_hands_per_s(players, seconds) for _ in range(repeats))
        yield {"name": f"engine.classic.p{players}.hands_per_s", "value": round(value), "unit": "hands/s"}
    value = statistics.median(arena_hands_per_s(4, seconds) for _ in range(repeats))
    yield {"name": "arena.classic.p4.hands_per_s", "value": round(value), "unit": "hands/s"}
