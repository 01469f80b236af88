"""Helpers for the Anniversary tests: whole games with every step recorded, positions by hand."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from games.anniversary.rules.anniversary import Anniversary, AnniversaryConfig, AnniversaryState
from referee.rules.core import CHANCE, Action, Decision, Event
from referee.rules.transcript import Playthrough

Policy = Callable[[Anniversary, AnniversaryState, Decision], Action]

GAMES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Hypothesis settings for tests that play whole games."""


def random_policy(seed: int, eager: bool = True) -> Policy:
    """A random legal action; ``eager`` plays a special card whenever one is legal (to cover them)."""
    rng = random.Random(seed)

    def policy(variant: Anniversary, state: AnniversaryState, decision: Decision) -> Action:
        options = decision.options
        if eager and len(options) > 1 and options[0] == ():
            options = options[1:]
        return rng.choice(options)

    return policy


class Step(NamedTuple):
    """One applied step of a game."""

    before: AnniversaryState
    actions: dict[int, Action]
    after: AnniversaryState
    events: tuple[Event, ...]


def play(
    variant: Anniversary, seed: int, policy: Policy, max_steps: int = 20_000
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


def step(
    variant: Anniversary, state: AnniversaryState, actions: Mapping[int, Action]
) -> tuple[AnniversaryState, list[Event]]:
    """Apply one step and return the next state and its events as a list."""
    state, events = variant.apply(state, actions)
    return state, list(events)


def of_type(events: list[Event], kind: type[Any]) -> list[Any]:
    """The events of one type."""
    return [e for e in events if isinstance(e, kind)]


@st.composite
def configs(draw: Any) -> AnniversaryConfig:
    """Valid configs over every option, with short games."""
    players = draw(st.integers(2, 8))
    rows = draw(st.one_of(st.just(4), st.integers(1, 5)))
    hand_size = draw(st.integers(1, min(12, (104 - rows) // players)))
    specials_each = draw(st.integers(0, min(4, 28 // players)))
    return AnniversaryConfig(
        players=players,
        hand_size=hand_size,
        rows=rows,
        row_capacity=draw(st.one_of(st.just(5), st.integers(1, 6))),
        rounds=draw(st.integers(1, 2)),
        specials_each=specials_each,
        max_rows=rows + draw(st.integers(0, 2)),
        specials_per_turn=draw(st.integers(1, 3)),
        swap=draw(st.booleans()),
        reshuffle_specials=draw(st.booleans()),
        keep_specials=draw(st.booleans()),
        fifth_row_end=draw(st.sampled_from(["round", "next_take"])),
        block_end=draw(st.sampled_from(["take", "turn", "round"])),
        positive_row_first=draw(st.booleans()),
    )


seeds = st.integers(0, 2**64 - 1)
