"""The search API (bot_sdk.search) against the engine it wraps: determinizations consistent with
the view, legal actions, apply, chance outcomes and their probabilities, the end of a search."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot_sdk.search import ClassicSearch, Search
from games.classic.rules.classic import Classic, ClassicConfig, ClassicState
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Action, Termination, Variant
from referee.rules.errors import ConfigError, IllegalActionError, NotPendingError
from referee.rules.registry import make_variant

SOME = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw: st.DrawFn) -> ClassicConfig:
    players = draw(st.integers(2, 10))
    rows = draw(st.one_of(st.just(4), st.integers(1, 5)))
    hand_size = draw(st.integers(1, min(10, (104 - rows) // players)))
    return ClassicConfig(
        players=players,
        rows=rows,
        hand_size=hand_size,
        row_capacity=draw(st.one_of(st.just(5), st.integers(1, 6))),
        tactics=draw(st.booleans()),
        professional=draw(st.booleans()),
        hands=draw(st.integers(1, 2)),
        target=None,
    )


Step = tuple[ClassicState, dict[int, Action], ClassicState]


def steps(variant: Classic, seed: int) -> Iterator[Step]:
    """Every step of a random game: (before, actions, after)."""
    chance = SeededChance(seed)
    rng = random.Random(seed)
    state = variant.initial_state()
    while pending := variant.pending(state):
        if pending[0].seat == CHANCE:
            actions: dict[int, Action] = {CHANCE: variant.sample_chance(state, chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        after, _ = variant.apply(state, actions)
        yield state, actions, after
        state = after


@SOME
@given(config=configs(), seed=st.integers(0, 2**32))
def test_a_view_and_the_true_hands_give_back_the_state(config: ClassicConfig, seed: int) -> None:
    variant = Classic(config)
    for state, _, _ in steps(variant, seed):
        if not variant.pending(state) or variant.pending(state)[0].seat == CHANCE:
            continue
        for seat in range(config.players):
            assert variant.from_view(variant.view(state, seat), state.hands) == state


@SOME
@given(config=configs(), seed=st.integers(0, 2**32), sampling=st.integers(0, 2**32))
def test_a_determinization_is_consistent_with_the_view_and_plays_by_the_engine(
    config: ClassicConfig, seed: int, sampling: int
) -> None:
    variant = Classic(config)
    rng = random.Random(sampling)
    for state, actions, after in steps(variant, seed):
        pending = variant.pending(state)
        if pending[0].seat == CHANCE:
            continue
        true = Search(variant)
        # Legal actions and apply through the API are the engine's, on the real state.
        assert true.legal_actions(state) == {d.seat: d.options for d in pending}
        assert true.apply(state, actions) == after
        seat = rng.randrange(config.players)
        view = variant.view(state, seat)
        search = ClassicSearch.of(view, config)
        sampled = search.determinize(view, rng)
        assert search.view(sampled, seat) == view
        unseen = set(view.unseen())
        for other, hand in enumerate(sampled.hands):
            assert len(hand) == len(view.hand)
            assert other == seat or set(hand) <= unseen
        legal = search.legal_actions(sampled)
        assert legal == {d.seat: d.options for d in variant.pending(sampled)}
        assert set(legal) == {d.seat for d in pending}, "the same seats are pending"
        if seat in legal:
            assert legal[seat] == true.legal_actions(state)[seat], "its own options are the real ones"
        # Any legal step applies as the engine applies it, and leaves its input alone.
        moves = {s: rng.choice(options) for s, options in legal.items()}
        kept = sampled
        assert search.apply(sampled, moves) == variant.apply(sampled, moves)[0]
        assert sampled == kept


@SOME
@given(config=configs(), seed=st.integers(0, 2**32))
def test_a_search_without_the_config_ends_with_the_views_hand(config: ClassicConfig, seed: int) -> None:
    variant = Classic(config)
    rng = random.Random(seed)
    for state, _, _ in steps(variant, seed):
        pending = variant.pending(state)
        if pending[0].seat == CHANCE or rng.random() < 0.7:
            continue
        view = variant.view(state, pending[0].seat)
        search = ClassicSearch.of(view)
        node = search.determinize(view, rng)
        while not search.is_terminal(node):
            assert not search.is_chance(node), "the search stays within the hand"
            node = search.apply(node, {s: rng.choice(o) for s, o in search.legal_actions(node).items()})
        outcome = search.outcome(node)
        assert outcome is not None and outcome.termination is Termination.HANDS_PLAYED
        assert search.scores(node) == outcome.scores
        assert all(after >= before for after, before in zip(outcome.scores, view.scores, strict=True))
        assert node.hand_no == view.hand_no


@pytest.mark.parametrize(
    "options",
    [
        {"players": 2, "hand_size": 1, "rows": 1, "tactics": True},  # cards 1 … 3: below the smallest deck
        {"players": 4, "tactics": True},
        {"players": 3, "deck": 60, "professional": True},
    ],
)
def test_a_search_reads_the_cards_in_play_from_the_view(options: dict[str, Any]) -> None:
    variant = Classic(ClassicConfig(**options, hands=1, target=None))
    state = next(before for before, _, _ in steps(variant, 2) if before.phase == 1)
    view = variant.view(state, 1)
    search = ClassicSearch.of(view)
    assert search.variant.config.top_card == variant.config.top_card
    assert search.view(search.determinize(view, random.Random(3)), 1) == view


def test_a_search_with_the_games_config_deals_the_next_hand() -> None:
    variant = Classic(ClassicConfig(players=3, hands=2, target=None))
    state = next(before for before, _, _ in steps(variant, 4) if before.phase == 1)
    view = variant.view(state, 0)
    search = ClassicSearch.of(view, {"players": 3, "hands": 2, "target": None})
    rng = random.Random(1)
    node = search.determinize(view, rng)
    chances = 0
    while not search.is_terminal(node):
        if search.is_chance(node):
            assert search.chance_outcomes(node) is None, "a whole deal is too many to list"
            node = search.apply(node, {CHANCE: search.sample_chance(node, rng)})
            chances += 1
        else:
            node = search.apply(node, {s: o[0] for s, o in search.legal_actions(node).items()})
    assert chances == 1 and node.hand_no == 2


def test_hands_that_contradict_the_view_are_refused() -> None:
    variant = Classic(ClassicConfig(players=2, hands=1, target=None))
    state = variant.position([(10,), (20,), (30,), (40,)], [(11, 12), (21, 22)])
    view = variant.view(state, 0)
    assert variant.from_view(view, [(11, 12), (50, 60)]).hands == ((11, 12), (50, 60))
    for hands in ([(11, 12), (20, 60)], [(11, 13), (50, 60)], [(11, 12), (50,)], [(11, 12), (50, 50)]):
        with pytest.raises(ConfigError):
            variant.from_view(view, hands)
    with pytest.raises(ConfigError, match="another config"):
        Classic(ClassicConfig(players=2, rows=3, hands=1, target=None)).from_view(view, [(11, 12), (21, 22)])
    search = ClassicSearch.of(view)
    with pytest.raises(IllegalActionError):
        search.apply(search.determinize(view, random.Random(0)), {0: 99, 1: 50})


# -- chance --------------------------------------------------------------------------------


def _chance_states(game: Variant[Any, Any], seed: int, limit: int = 400) -> Iterator[Any]:
    """The chance states of a random game."""
    chance = SeededChance(seed)
    rng = random.Random(seed)
    state = game.initial_state()
    for _ in range(limit):
        pending = game.pending(state)
        if not pending:
            return
        if pending[0].seat == CHANCE:
            yield state
            actions: dict[int, Action] = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        state, _ = game.apply(state, actions)


LISTED = [
    ("junior-basic", {}),
    ("junior-advanced", {}),
    ("board", {"pro": True}),
    ("board", {"pro": True, "luck": True, "action_cards_each": 1, "skip_cards": 1, "stop_cards": 1}),
    ("classic", {"players": 2, "hand_size": 1, "rows": 1, "deck": 6, "hands": 2, "target": None}),
    ("classic", {"players": 2, "hand_size": 2, "rows": 2, "deck": 7, "hands": 1, "target": None}),
]


@pytest.mark.parametrize(("name", "options"), LISTED, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LISTED)])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_listed_chance_outcomes_are_legal_distinct_and_sum_to_one(
    name: str, options: dict[str, Any], seed: int
) -> None:
    game = make_variant(name, options)
    search = Search(game)
    listed = 0
    for state in _chance_states(game, seed):
        outcomes = search.chance_outcomes(state)
        if outcomes is None:
            continue
        listed += 1
        assert math.isclose(sum(p for _, p in outcomes), 1.0)
        assert all(p > 0 for _, p in outcomes)
        nexts = [search.apply(state, {CHANCE: action}) for action, _ in outcomes]
        assert len(set(nexts)) == len(nexts), "each outcome once"
        drawn = search.apply(state, {CHANCE: search.sample_chance(state, random.Random(seed))})
        assert drawn in nexts, "the engine's own draw is one of them"
    assert listed, "these games have chance outcomes to list"
    assert search.scores(game.initial_state()) == (0,) * game.players
    assert search.scores(state) == game.view(state, 0).scores


def test_listed_probabilities_are_the_engines_frequencies() -> None:
    """A deal of a tiny classic game: the listed probabilities match the referee's draws."""
    game = Classic(ClassicConfig(players=2, hand_size=1, rows=1, deck=5, hands=1, target=None))
    state = game.initial_state()
    outcomes = Search(game).chance_outcomes(state)
    assert outcomes is not None and len(outcomes) == 5 * 4 * 3
    counts: dict[ClassicState, int] = {}
    for seed in range(6000):
        after, _ = game.apply(state, {CHANCE: game.sample_chance(state, SeededChance(seed))})
        counts[after] = counts.get(after, 0) + 1
    states = {game.apply(state, {CHANCE: a})[0]: p for a, p in outcomes}
    assert set(counts) == set(states)
    for after, p in states.items():
        assert abs(counts[after] / 6000 - p) < 4 * math.sqrt(p * (1 - p) / 6000)


def test_chance_outcomes_outside_chance_are_an_error() -> None:
    game = Classic(ClassicConfig(players=2, hands=1, target=None))
    state = game.position([(10,), (20,), (30,), (40,)], [(11,), (21,)])
    with pytest.raises(NotPendingError):
        game.chance_outcomes(state)
    junior = make_variant("junior-advanced")
    start = junior.initial_state()
    dealt, _ = junior.apply(start, {CHANCE: junior.sample_chance(start, SeededChance(1))})
    assert junior.chance_outcomes(start) is None, "a deal is too many to list"
    with pytest.raises(NotPendingError):
        junior.chance_outcomes(dealt)
