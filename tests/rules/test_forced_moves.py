"""The core's one forced-move policy (ForcedMoves, Variant.forced): each variant's default, and
that asking a forced move or making it plays the same game."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.board.rules.brettspiel import Brettspiel
from games.classic.rules.classic import Classic
from games.junior.rules.junior import JuniorAdvanced, JuniorBasic, JuniorExperts
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Action, Decision, DecisionKind, Event, ForcedMoves, Variant
from referee.rules.registry import VARIANTS, make_variant

DEFAULTS = {
    "classic": ForcedMoves.ASK,
    "junior-basic": ForcedMoves.PLAY,
    "junior-advanced": ForcedMoves.PLAY,
    "junior-experts": ForcedMoves.PLAY,
    "board": ForcedMoves.PLAY,
}
"""What each variant did before the policy was one attribute; transcripts depend on it."""


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_each_variant_keeps_its_policy(name: str) -> None:
    cls = next(cls for cls in VARIANTS if cls.name == name)
    assert cls.forced_moves is DEFAULTS[name]


def test_the_helper_forces_only_a_lone_seats_single_option() -> None:
    game = make_variant("junior-basic")
    one = Decision(0, DecisionKind.ROW, (2,))
    assert game.forced((one,)) == one
    assert game.forced((Decision(0, DecisionKind.ROW, (1, 2)),)) is None
    assert game.forced((one, Decision(1, DecisionKind.ROW, (3,)))) is None, "simultaneous steps are asked"
    assert game.forced((Decision(CHANCE, DecisionKind.CHANCE, (5,)),)) is None, "chance is drawn"
    assert game.forced(()) is None
    assert make_variant("classic").forced((one,)) is None, "classic asks"


def _play(game: Variant[Any, Any], seed: int, choose: random.Random) -> tuple[list[Event], Any, int]:
    """A whole game: chance from ``seed``; a decision with several options from ``choose``, a
    single option answered with it. Returns the events, the outcome and the forced moves asked."""
    chance = SeededChance(seed)
    state = game.initial_state()
    events: list[Event] = []
    asked = 0
    while pending := game.pending(state):
        assert len(events) < 100_000
        if pending[0].seat == CHANCE:
            actions: dict[int, Action] = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {}
            for decision in pending:
                if len(decision.options) == 1:
                    asked += len(pending) == 1
                    actions[decision.seat] = decision.options[0]
                else:
                    actions[decision.seat] = choose.choice(decision.options)
        state, step = game.apply(state, actions)
        events.extend(step)
    return events, game.outcome(state), asked


def _flipped(game: Variant[Any, Any]) -> Variant[Any, Any]:
    """The same game under the other policy: a subclass that names it, as a variant does."""
    policy = ForcedMoves.ASK if game.forced_moves is ForcedMoves.PLAY else ForcedMoves.PLAY
    cls = type(game)
    return type(f"{cls.__name__}Flipped", (cls,), {"forced_moves": policy})(game.config)


GAMES: list[tuple[str, type[Variant[Any, Any]], dict[str, Any]]] = [
    ("junior-basic", JuniorBasic, {}),
    ("junior-advanced", JuniorAdvanced, {"players": 3}),
    ("junior-experts", JuniorExperts, {}),
    ("board", Brettspiel, {}),
    ("board-luck", Brettspiel, {"luck": True, "players": 3}),
    ("board-pro", Brettspiel, {"pro": True}),
    ("board-pro-luck", Brettspiel, {"pro": True, "luck": True, "players": 5}),
    ("classic-one-row", Classic, {"rows": 1, "players": 3, "hands": 2, "target": None}),
    ("classic-one-row-pro", Classic, {"rows": 1, "professional": True, "hands": 1, "target": None}),
]


@pytest.mark.parametrize(("label", "cls", "options"), GAMES, ids=[g[0] for g in GAMES])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_asking_a_forced_move_or_making_it_plays_the_same_game(
    label: str, cls: type[Variant[Any, Any]], options: dict[str, Any], seed: int, choices: int
) -> None:
    game = make_variant(cls.name, options)
    other = _flipped(game)
    play, ask = (game, other) if game.forced_moves is ForcedMoves.PLAY else (other, game)
    play_events, play_outcome, play_asked = _play(play, seed, random.Random(choices))
    ask_events, ask_outcome, _ = _play(ask, seed, random.Random(choices))
    assert play_asked == 0, "under PLAY no lone decision with one option is ever pending"
    assert play_events == ask_events
    assert play_outcome == ask_outcome


@pytest.mark.parametrize(("label", "cls", "options"), GAMES, ids=[g[0] for g in GAMES])
def test_these_games_have_forced_moves_to_ask(
    label: str, cls: type[Variant[Any, Any]], options: dict[str, Any]
) -> None:
    """Guard for the test above: under ASK its games do ask forced moves."""
    game = make_variant(cls.name, options)
    ask = game if game.forced_moves is ForcedMoves.ASK else _flipped(game)
    assert sum(_play(ask, seed, random.Random(seed))[2] for seed in range(10)) > 0
