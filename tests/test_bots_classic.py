"""Tests of the classic reference bots: legal play everywhere, determinism, the MC bot's
simulation against the engine, and measured strength."""

from __future__ import annotations

import functools
import itertools
import random
from typing import Any

import pytest

from bot_sdk.arena import BotFactory, play_match
from bot_sdk.bot import ClassicBot
from bot_sdk.bots import REFERENCE_BOTS, reference_bot
from bot_sdk.bots.classic import RandomBot, card_risks, cheapest_row, expected_penalty
from bot_sdk.bots.montecarlo import (
    MonteCarloBot,
    _greedy,
    _Model,
    _playout,
    _playout_professional,
    _Sample,
    _Table,
    take_odds,
)
from bot_sdk.evaluate import Evaluation, bulls_per_hand
from referee.rules.cards import BULLS
from referee.rules.classic import Classic, ClassicConfig, ClassicView
from referee.rules.core import DecisionKind
from referee.rules.registry import make_variant

BOTS = sorted(REFERENCE_BOTS["classic"])

CONFIGS: list[dict[str, Any]] = [
    {"players": 2, "hands": 2, "target": None},
    {"players": 4, "target": 66},
    {"players": 10, "hands": 1, "target": None},
    {"players": 5, "tactics": True, "hands": 2, "target": None},
    {"players": 3, "professional": True, "hands": 2, "target": None},
    {"players": 6, "tactics": True, "professional": True, "hands": 1, "target": None},
    {"players": 3, "rows": 2, "row_capacity": 3, "hand_size": 6, "deck": 30, "hands": 2, "target": None},
    {"players": 4, "rows": 1, "row_capacity": 1, "hand_size": 3, "hands": 2, "target": None},
]


def factory(name: str) -> BotFactory:
    """A reference bot by name; the Monte Carlo bot on a small budget, to keep the tests quick."""
    if name == "mc":
        return functools.partial(MonteCarloBot, 200)
    return reference_bot("classic", name)


@pytest.mark.parametrize("name", BOTS)
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_bots_play_only_legal_actions(name: str, config: dict[str, Any]) -> None:
    variant = make_variant("classic", config)
    others = [reference_bot("classic", "random"), reference_bot("classic", "heuristic")]
    for seed in range(3):
        # The bot in every other seat, so it meets itself, random and heuristic bots.
        seats = [factory(name) if s % 2 == seed % 2 else others[s % 2 - 1] for s in range(variant.players)]
        result = play_match(variant, seats, seed)  # an illegal answer raises BotError
        assert result.outcome.termination.value in {"hands_played", "target_reached"}


@pytest.mark.parametrize("name", BOTS)
def test_bots_are_deterministic_given_the_seed(name: str) -> None:
    variant = make_variant("classic", {"players": 4, "hands": 2, "target": None})
    seats = [factory(name)] * 4

    def digest(seed: int) -> str:
        return play_match(variant, seats, seed).transcript.digest()

    assert digest(7) == digest(7)
    if name in {"random", "mc"}:  # their own choices depend on the seat seeds
        seats_with_random = [factory(name), RandomBot, RandomBot, RandomBot]
        assert play_match(variant, seats_with_random, 3).transcript.digest() == (
            play_match(variant, seats_with_random, 3).transcript.digest()
        )


# -- the heuristic -----------------------------------------------------------------------


def test_expected_penalty_certain_cases() -> None:
    rows = [(10, 11, 12, 13, 14), (51,), (60, 61), (91,)]
    # Nothing unseen between 14 and 15: the sixth card takes the row for sure.
    assert expected_penalty(15, rows, [70, 80, 99], 3, 5) == 3 + 5 + 1 + 1 + 1  # 10, 11, 12, 13, 14
    # A short row is safe; a low card takes the cheapest row.
    assert expected_penalty(52, rows, [53, 54, 99], 3, 5) == 0.0
    assert expected_penalty(5, rows, [70, 80, 99], 3, 5) == 1.0


def test_expected_penalty_is_exact_when_no_other_card_is_low() -> None:
    """Against every equally likely pair of other cards, played through the engine."""
    rows = [(20, 30, 33, 40), (60,), (70,), (80,)]
    unseen = [41, 42, 43, 44, 45, 46, 50, 55, 65, 66, 90]
    for card in (47, 51, 67):
        variant = Classic(ClassicConfig(players=3, hands=1, target=None, hand_size=1))
        taken = []
        for pair in itertools.combinations(unseen, 2):
            state = variant.position(rows, [(card,), (pair[0],), (pair[1],)])
            state, _ = variant.apply(state, {0: card, 1: pair[0], 2: pair[1]})
            taken.append(state.scores[0])
        assert expected_penalty(card, rows, unseen, 2, 5) == pytest.approx(sum(taken) / len(taken))


def test_heuristic_avoids_a_sure_sixth_card() -> None:
    variant = Classic(ClassicConfig(players=2, hands=1, target=None))
    state = variant.position([(10, 11, 12, 13, 14), (50,), (60,), (70,)], [(15, 52), (1, 2)])
    view = variant.view(state, 0)
    assert reference_bot("classic", "heuristic")().decide(view) == 52
    assert min(card_risks(view))[2] == 52


def test_cheapest_row_breaks_ties_by_the_rest_of_the_turn() -> None:
    rows = [(41, 42), (51, 52, 53), (61, 62), (71, 72, 73)]
    # Rows 0 and 2 cost 2 bull heads; 43 would follow our 3 on row 0 but not on row 2.
    assert cheapest_row(rows, [(3, 0), (43, 1)], 0) == 2
    assert cheapest_row(rows, [(3, 0), (63, 1)], 0) == 0
    assert cheapest_row([(41, 42), (51,), (61, 62), (71,)], [(3, 0)], 0) == 1


# -- the Monte Carlo bot's simulation against the engine ---------------------------------


def _random_position(
    rng: random.Random, professional: bool
) -> tuple[Classic, list[list[int]], list[list[int]]]:
    players, rows, capacity, size = rng.randint(2, 6), rng.randint(1, 5), rng.randint(2, 6), rng.randint(1, 6)
    variant = Classic(
        ClassicConfig(
            players=players,
            rows=rows,
            row_capacity=capacity,
            hand_size=size,
            hands=1,
            target=None,
            professional=professional,
        )
    )
    deck = list(range(1, 105))
    rng.shuffle(deck)
    table = [sorted(deck.pop() for _ in range(rng.randint(1, capacity))) for _ in range(rows)]
    hands = [sorted(deck.pop() for _ in range(size)) for _ in range(players)]
    return variant, table, hands


@pytest.mark.parametrize("professional", [False, True])
def test_playouts_take_what_the_engine_takes(professional: bool) -> None:
    """Seat 0 plays a given card, then the greedy policy; every low card takes the cheapest row."""
    rng = random.Random(5)
    playout = _playout_professional if professional else _playout
    for _ in range(300):
        variant, rows, hands = _random_position(rng, professional)
        capacity = variant.config.row_capacity
        model = _Model(capacity, BULLS, take_odds(len(hands) - 1, 50, capacity, 104), cheapest=1.0)
        orders = [rng.sample(hand, len(hand)) for hand in hands]
        first, first_hand = orders[0][0], hands[0]
        plays = [sorted(order[t] for order in orders[1:]) for t in range(len(first_hand))]
        state = variant.position(rows, hands)
        for turn in range(len(first_hand)):
            mine = first
            if turn:
                table = _Table.of(state.rows, BULLS)
                hand = list(state.hands[0])
                mine = _greedy(hand, table.lasts, table.counts, table.heads, capacity, model.odds)
            state, _ = variant.apply(state, {0: mine, **{s: orders[s][turn] for s in range(1, len(hands))}})
            while state.pending and state.pending[0].kind is DecisionKind.ROW:
                decision = state.pending[0]
                state, _ = variant.apply(state, {decision.seat: variant.default_action(state, decision)})
        rest = [c for c in first_hand if c != first]
        simulated = playout(_Table.of(rows, BULLS), first, rest, _Sample(plays, rng.random()), model)
        assert simulated == state.scores[0], (rows, hands, orders)


def test_mc_avoids_a_sure_sixth_card() -> None:
    variant = Classic(ClassicConfig(players=2, hands=1, target=None))
    state = variant.position([(10, 11, 12, 13, 14), (50,), (60,), (70,)], [(15, 52), (1, 2)])
    bot = MonteCarloBot(200)
    bot.rng = random.Random(1)
    assert bot.decide(variant.view(state, 0)) == 52


# -- evaluation and strength --------------------------------------------------------------


def test_evaluation_does_not_depend_on_processes() -> None:
    one = bulls_per_hand("heuristic", hands=24, seed=3)
    two = bulls_per_hand("heuristic", hands=24, seed=3, processes=2)
    assert isinstance(one, Evaluation)
    assert (one.mean, one.low, one.high, one.hands) == (two.mean, two.low, two.high, two.hands)
    assert one.low <= one.mean <= one.high


@pytest.mark.slow
def test_heuristic_is_clearly_better_than_random() -> None:
    random_bot = bulls_per_hand("random", hands=300, seed=1)
    heuristic = bulls_per_hand("heuristic", hands=300, seed=1)
    assert 11 < random_bot.mean < 16
    assert heuristic.high < random_bot.low
    assert heuristic.mean <= 8


@pytest.mark.slow
def test_mc_is_clearly_better_than_heuristic() -> None:
    heuristic = bulls_per_hand("heuristic", hands=300, seed=2)
    mc = bulls_per_hand("mc", hands=300, seed=2, processes=2)
    assert mc.high < heuristic.mean
    assert mc.mean <= 5.5


def _unused(_: ClassicBot, __: ClassicView) -> None:  # keep imports honest for type checkers
    return None
