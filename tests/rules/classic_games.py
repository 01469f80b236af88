"""Whole classic games for tests: random configs, seeded policies, and every step recorded."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, NamedTuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from games.classic.rules.classic import Classic, ClassicConfig, ClassicState
from referee.rules.core import CHANCE, Action, Decision, Event
from referee.rules.transcript import Playthrough

Policy = Callable[[Classic, ClassicState, Decision], Action]

GAMES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Hypothesis settings for tests that play whole games: modest, and no per-example deadline."""


def random_policy(seed: int) -> Policy:
    """A legal action chosen at random, from a generator of its own seeded by ``seed``."""
    rng = random.Random(seed)

    def policy(variant: Classic, state: ClassicState, decision: Decision) -> Action:
        return rng.choice(decision.options)

    return policy


def default_policy(variant: Classic, state: ClassicState, decision: Decision) -> Action:
    """The referee's default for a silent seat: lowest card, cheapest row."""
    return variant.default_action(state, decision)


class Step(NamedTuple):
    """One applied step of a game."""

    before: ClassicState
    actions: dict[int, Action]
    after: ClassicState
    events: tuple[Event, ...]


def play(
    variant: Classic, seed: int, policy: Policy, max_steps: int = 3000
) -> tuple[Playthrough, list[Step]]:
    """Play a game to its end: chance from ``seed``, every seat's decision from ``policy``."""
    game = Playthrough(variant, seed)
    steps: list[Step] = []
    while pending := game.pending():
        assert len(steps) < max_steps, "the game does not end"
        before = game.state
        if pending[0].seat == CHANCE:
            actions: dict[int, Action] = {CHANCE: variant.sample_chance(before, game.chance)}
        else:
            actions = {d.seat: policy(variant, before, d) for d in pending}
        events = game.apply(actions)
        steps.append(Step(before, actions, game.state, events))
    return game, steps


@st.composite
def classic_configs(draw: Any, min_players: int = 2, max_players: int = 10) -> ClassicConfig:
    """Valid classic configs: any table size, options, and a short end condition."""
    n = draw(st.integers(min_players, max_players))
    rows = draw(st.one_of(st.just(4), st.integers(1, 6)))
    capacity = draw(st.one_of(st.just(5), st.integers(1, 6)))
    largest_hand = min(10, (104 - rows) // n)
    hand_size = draw(st.one_of(st.just(largest_hand), st.integers(1, largest_hand)))
    target = draw(st.one_of(st.none(), st.integers(5, 66)))
    # A target alone needs hands that can fill the rows: with few cards and long rows nobody
    # takes a card (under Professional not even a low card) and the game would never end.
    open_ended = target is not None and n * hand_size >= rows * (capacity - 1)
    hands = draw(st.one_of(st.none(), st.integers(1, 3)) if open_ended else st.integers(1, 3))
    return ClassicConfig(
        players=n,
        hand_size=hand_size,
        rows=rows,
        row_capacity=capacity,
        target=target,
        hands=hands,
        tactics=draw(st.booleans()),
        professional=draw(st.booleans()),
    )


seeds = st.integers(0, 2**64 - 1)
