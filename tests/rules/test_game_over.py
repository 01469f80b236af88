"""Every game ends with the core's one game-over event, the outcome's scores, ranks and termination."""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, GameEnded, Variant
from referee.rules.registry import VARIANTS


def play_out(variant: Variant[Any, Any], seed: int) -> tuple[Any, list[Any]]:
    """A random legal game to its end: the last state and every event."""
    rng, chance = random.Random(seed), SeededChance(seed)
    state, events = variant.initial_state(), []
    for _ in range(100_000):
        pending = variant.pending(state)
        if not pending:
            return state, events
        actions = {
            d.seat: variant.sample_chance(state, chance) if d.seat == CHANCE else rng.choice(d.options)
            for d in pending
        }
        state, new = variant.apply(state, actions)
        events += new
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("cls", list(VARIANTS), ids=lambda cls: cls.name)
def test_every_game_ends_with_the_cores_game_ended(cls: type[Variant[Any, Any]]) -> None:
    variant = cls()
    state, events = play_out(variant, seed=7)
    outcome = variant.outcome(state)
    assert outcome is not None
    ended = [e for e in events if isinstance(e, GameEnded)]
    assert ended == [events[-1]]
    assert type(events[-1]) is GameEnded  # the core's type, not a copy of the game's own
    assert events[-1] == GameEnded(outcome.scores, outcome.ranks, outcome.termination.value)
