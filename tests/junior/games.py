"""Random play straight through the engine, step by step, for property tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from games.junior.rules.junior import Junior, JuniorState
from referee.rules import CHANCE, Decision, Event, SeededChance


def random_steps(
    variant: Junior[Any], seed: int
) -> Iterator[tuple[JuniorState, Decision, Any, JuniorState, tuple[Event, ...]]]:
    """Each step of a game with uniformly random choices: (before, decision, action, after, events)."""
    chance = SeededChance(seed)
    choose = random.Random(seed).choice
    state = variant.initial_state()
    while pending := variant.pending(state):
        decision = pending[0]
        action = variant.sample_chance(state, chance) if decision.seat == CHANCE else choose(decision.options)
        after, events = variant.apply(state, {decision.seat: action})
        yield state, decision, action, after, events
        state = after
