"""Classic's views are built by a maker that sets their slots directly (games.classic.rules.classic):
the same frozen view, field for field, as the dataclass's own constructor builds."""

from __future__ import annotations

import dataclasses
import random

import pytest

from games.classic.rules.classic import ClassicView, _slotted_maker
from referee.rules import CHANCE, SeededChance, make_variant


def test_every_view_of_a_game_is_the_one_the_constructor_builds() -> None:
    game = make_variant("classic", {"players": 5, "professional": True})
    rng, chance = random.Random(3), SeededChance(3)
    state = game.initial_state()
    views = 0
    while pending := game.pending(state):
        for seat in range(game.players):
            view = game.view(state, seat)
            rebuilt = ClassicView(*(getattr(view, f.name) for f in dataclasses.fields(ClassicView)))
            assert type(view) is ClassicView
            assert view == rebuilt and hash(view.hand) == hash(rebuilt.hand)
            assert dataclasses.astuple(view) == dataclasses.astuple(rebuilt)
            views += 1
        if pending[0].seat == CHANCE:
            actions = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        state, _ = game.apply(state, actions)
    assert views > 100
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.seat = 1  # type: ignore[misc]


def test_the_maker_refuses_a_class_it_would_build_wrongly() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            assert self.value >= 0

    with pytest.raises(TypeError, match="plain frozen slotted"):
        _slotted_maker(Checked)
