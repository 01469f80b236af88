"""Tests of the classic reference bots: legal play everywhere, determinism, the MC bot's
simulation against the engine, and measured strength."""

from __future__ import annotations

import functools
import itertools
import math
import os
import random
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.evaluate import Evaluation, bulls_per_hand
from bot_sdk.bot import fewest_heads_row, row_heads
from bot_sdk.bots import REFERENCE_BOTS, reference_bot
from bot_sdk.play import BotFactory, play_match
from games.classic.bots import RandomBot, card_risks, cheapest_row, expected_penalty
from games.classic.montecarlo import (
    MonteCarloBot,
    _greedy,
    _Model,
    _playout,
    _playout_professional,
    _Sample,
    _Table,
    take_odds,
)
from games.classic.rules.classic import Classic, ClassicConfig
from referee.rules.cards import BULLS
from referee.rules.core import DecisionKind
from referee.rules.placement import LOW, placement
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
    opponents = [reference_bot("classic", "random"), reference_bot("classic", "heuristic")]
    for seed in range(3 if name == "mc" else 20):
        # The bot in every other seat, so that it meets itself and, by turns, the random and
        # the heuristic bot.
        other = opponents[seed % 2]
        seats = [factory(name) if (s + seed) % 2 == 0 else other for s in range(variant.players)]
        result = play_match(variant, seats, seed)  # an illegal answer raises BotError
        assert result.outcome.termination.value in {"hands_played", "target_reached"}


@pytest.mark.parametrize("name", BOTS)
def test_bots_are_deterministic_given_the_seed(name: str) -> None:
    variant = make_variant("classic", {"players": 4, "hands": 2, "target": None})
    seats = [factory(name), factory(name), RandomBot, RandomBot]

    def digest(seed: int) -> str:
        return play_match(variant, seats, seed).transcript.digest()

    assert digest(7) == digest(7)
    assert digest(7) != digest(8)


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


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[tuple[int, ...]], int, int]:
    """Rows of 1 … capacity ascending cards, the capacity, and a card on none of the rows."""
    capacity = draw(st.integers(1, 6))
    count = draw(st.integers(1, 6))
    top = draw(st.sampled_from([20, 104]))  # a small deck makes equal distances (ties) likely
    deal = st.lists(st.integers(1, top), min_size=count + 1, max_size=count * capacity + 1, unique=True)
    cards = draw(deal)
    card, rest = cards[0], cards[1:]
    rows = [sorted(rest[r::count]) for r in range(count)]
    return [tuple(row[:capacity]) for row in rows], capacity, card


@settings(max_examples=1000, deadline=None)
@given(table=_tables(), professional=st.booleans())
def test_playouts_place_a_card_where_the_shared_rule_does(
    table: tuple[list[tuple[int, ...]], int, int], professional: bool
) -> None:
    """The playouts' own placement (bisected on sorted arrays) is referee.rules.placement's, on
    any rows and card: another seat's card, a low card taking the cheapest row (first on a tie)."""
    rows, capacity, card = table
    model = _Model(capacity, BULLS, take_odds(1, 50, capacity, 104), cheapest=1.0)
    sim = _Table.of(rows, BULLS)
    playout = _playout_professional if professional else _playout
    assert playout(sim, -1, [], _Sample([[card]], 0.0), model) == 0
    row, left = placement(card, rows, professional)
    expected = list(rows)
    if row == LOW:
        expected[fewest_heads_row(rows)] = (card,)
    elif len(rows[row]) >= capacity:
        expected[row] = (card,)
    else:
        expected[row] = (card, *rows[row]) if left else (*rows[row], card)
    for i, index in enumerate(sim.ids):
        want = expected[index]
        got = (sim.lasts[i], sim.counts[i], sim.heads[i])
        assert got == (want[-1], len(want), row_heads(want)), (i, index)
        if professional:  # the plain playout does not keep the first cards up to date
            assert sim.firsts[i] == want[0]
    assert sim.lasts == sorted(sim.lasts)


def test_mc_avoids_a_sure_sixth_card() -> None:
    variant = Classic(ClassicConfig(players=2, hands=1, target=None))
    state = variant.position([(10, 11, 12, 13, 14), (50,), (60,), (70,)], [(15, 52), (1, 2)])
    bot = MonteCarloBot()
    bot.rng = random.Random(1)
    assert bot.decide(variant.view(state, 0)) == 52


def test_mc_takes_the_cheap_row_with_a_low_card() -> None:
    variant = Classic(ClassicConfig(players=2, hands=1, target=None))
    # Row bull heads: 1, 7, 6, 10. Seat 0's 3 is below every row.
    rows = [(51,), (55, 66), (60, 70), (77, 88)]
    state = variant.position(rows, [(3, 20, 90), (4, 30, 95)])
    state, _ = variant.apply(state, {0: 3, 1: 95})
    view = variant.view(state, 0)
    assert view.decision is not None and view.decision.kind is DecisionKind.ROW
    bot = MonteCarloBot()
    bot.rng = random.Random(1)
    assert bot.decide(view) == 0


def test_mc_rejects_a_bad_setting() -> None:
    with pytest.raises(ValueError, match="cheapest_rows"):
        MonteCarloBot(cheapest_rows=2.0)


# -- evaluation and strength --------------------------------------------------------------


def test_evaluation_does_not_depend_on_processes() -> None:
    one = bulls_per_hand("heuristic", hands=24, seed=3)
    two = bulls_per_hand("heuristic", hands=24, seed=3, processes=2)
    assert isinstance(one, Evaluation)
    assert (one.mean, one.low, one.high, one.hands) == (two.mean, two.low, two.high, two.hands)
    assert one.low <= one.mean <= one.high


def _z(better: Evaluation, worse: Evaluation) -> float:
    """How many standard errors ``better`` takes fewer bull heads than ``worse`` (Welch)."""
    se = math.hypot((better.high - better.mean) / 1.96, (worse.high - worse.mean) / 1.96)
    return (worse.mean - better.mean) / se


@pytest.mark.slow
def test_heuristic_is_clearly_better_than_random() -> None:
    random_bot = bulls_per_hand("random", hands=300)
    heuristic = bulls_per_hand("heuristic", hands=300)
    assert 11 < random_bot.mean < 16
    assert heuristic.mean <= 8
    assert _z(heuristic, random_bot) > 5


@pytest.mark.slow
def test_mc_is_clearly_better_than_heuristic() -> None:
    """One-sided at 97.7%: the heuristic's mean comes from many (cheap) hands to sharpen it."""
    heuristic = bulls_per_hand("heuristic", hands=2000, processes=2)
    mc = bulls_per_hand("mc", hands=400, processes=2)
    assert mc.mean <= 5.5
    assert _z(mc, heuristic) > 2
    assert mc.ms_per_decision < 50  # a loose bound: the machine may be busy with other tests


# -- the Monte Carlo bot's numpy batch playouts (games.classic.sim.playouts) --------------


def _batch_playouts(kind: str) -> Any:
    """The batch playouts of one kind: ``numpy`` (the reference), or ``native`` (C: what
    :func:`~games.classic.sim.playouts.playouts` runs where its extension module is built; under
    ``make test``, SIXNIMMT_TEST_NATIVE=required, a missing build fails rather than skips)."""
    pytest.importorskip("numpy")
    from games.classic.sim import playouts as batch

    if kind == "numpy":
        return batch.playouts_numpy
    if not batch.NATIVE:
        message = "the C playouts (games/classic/sim/_native.c) are not built: pip install -e . (a compiler)"
        if os.environ.get("SIXNIMMT_TEST_NATIVE") == "required":
            pytest.fail(message)
        pytest.skip(message)
    return batch.playouts


@pytest.mark.parametrize("kind", ["native", "numpy"])
@pytest.mark.parametrize("cheapest", [1.0, 0.0, 0.5])
def test_batch_playouts_take_what_the_engine_takes(cheapest: float, kind: str) -> None:
    """Seat 0 plays a given card, then the batch greedy policy; the others' cards come in a
    given order, their low cards take the row the salt says. The engine, given the same cards
    and rows, gives seat 0 the same bull heads, in every game of one batch."""
    playouts = _batch_playouts(kind)
    import numpy as np

    from games.classic.sim import playouts as batch

    rng = random.Random(11)
    positions = [_random_position(rng, professional=False) for _ in range(400)]
    for variant, rows, hands in positions:
        capacity = variant.config.row_capacity
        size, others = len(hands[0]), len(hands) - 1
        orders = [rng.sample(hand, len(hand)) for hand in hands]
        first = orders[0][0]
        plays = np.array([[sorted(order[t] for order in orders[1:]) for t in range(size)]], np.int64)
        salt = rng.random()
        odds = np.array(take_odds(others, 50, capacity, 104))
        rest = [c for c in hands[0] if c != first] + [batch.NONE]
        taken, chosen = playouts(
            np.array([[row[-1] for row in rows]]),
            np.array([[len(row) for row in rows]]),
            np.array([[row_heads(row) for row in rows]]),
            np.array([rest[: max(size - 1, 1)]], np.int64),
            np.array([first]),
            plays,
            np.array([salt]),
            capacity=capacity,
            bulls=np.array(BULLS),
            odds=odds,
            cheapest=cheapest,
        )
        state = variant.position(rows, hands)
        for turn in range(size):
            mine = int(chosen[0, 0, turn])
            assert turn or mine == first
            state, _ = variant.apply(state, {0: mine, **{s: orders[s][turn] for s in range(1, len(hands))}})
            while state.pending and state.pending[0].kind is DecisionKind.ROW:
                seat = state.pending[0].seat
                card = state.revealed[state.placed][0]
                row = variant.default_action(state, state.pending[0])
                u = (card * 0.6180339887498949 + salt) % 1.0
                if seat and u >= cheapest:
                    row = min(int((u - cheapest) / (1.0 - cheapest) * len(rows)), len(rows) - 1)
                state, _ = variant.apply(state, {seat: row})
        assert int(taken[0, 0]) == state.scores[0], (rows, hands, orders, salt)


def _random_batch(rng: Any, np: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of one random call of the batch playouts: 2 to 10 seats, rows of 1 to 5
    cards (not in order), hands of 1 to 10, each candidate's first card given or all left to the
    greedy policy, 1 to 40 deals, any share of cheapest rows."""
    from games.classic.sim import playouts as batch

    players = int(rng.integers(2, 11))
    others = players - 1
    size = int(rng.integers(1, min(10, 84 // players) + 1))  # rows of at most 20 cards: the rest is dealt
    deck = rng.permutation(np.arange(1, 105)).tolist()
    rows = [[deck.pop() for _ in range(int(rng.integers(1, 6)))] for _ in range(4)]
    rows = [sorted(row) for row in rows]
    hand = sorted(deck.pop() for _ in range(size))
    unseen = np.array(deck[: others * size + int(rng.integers(0, len(deck) - others * size + 1))], np.int64)
    given = bool(rng.random() < 0.5)
    hands = [hand[:i] + hand[i + 1 :] for i in range(size)] if given else [hand] * int(rng.integers(1, 5))
    held = np.full((len(hands), max(1, max(map(len, hands)))), batch.NONE, np.int64)
    for k, cards in enumerate(hands):
        held[k, : len(cards)] = cards
    first = np.array(hand if given else [0] * len(hands), np.int64)
    samples = int(rng.integers(1, 41))
    plays = batch.deal(unseen, others, size, samples, rng)
    args = (
        np.array([[row[-1] for row in rows]] * len(hands)),
        np.array([[len(row) for row in rows]] * len(hands)),
        np.array([[row_heads(row) for row in rows]] * len(hands)),
        held,
        first,
        plays,
        rng.random(samples),
    )
    cheapest = float(rng.choice([0.0, 0.5, 1.0, float(rng.random())]))
    odds = np.array(take_odds(others, len(unseen), 5, 104))
    return args, {"capacity": 5, "bulls": np.array(BULLS), "odds": odds, "cheapest": cheapest}


def test_native_playouts_play_what_the_numpy_batch_plays() -> None:
    """On random positions, deals and policies the C playouts give every game the numpy batch's
    bull heads and cards, to the last rounding of the greedy scores and the row choices."""
    native, reference = _batch_playouts("native"), _batch_playouts("numpy")
    import numpy as np

    rng = np.random.default_rng(7)
    for _ in range(1500):
        args, options = _random_batch(rng, np)
        taken, chosen = native(*args, **options)
        expected_taken, expected_chosen = reference(*args, **options)
        assert np.array_equal(taken, expected_taken) and np.array_equal(chosen, expected_chosen), options


def test_native_playouts_reject_bad_input() -> None:
    """A call the C playouts cannot play raises ValueError before any game and writes nothing."""
    native = _batch_playouts("native")
    import numpy as np

    from games.classic.sim import _native  # type: ignore[attr-defined]

    args, options = _random_batch(np.random.default_rng(7), np)
    lasts, counts, heads, hands, first, plays, salt = args
    assert hands.shape[0] > 1 and hands.shape[1] > 1 and not first.any()  # every check below applies
    names = ("lasts", "counts", "heads", "hands", "first", "plays", "salt")

    def call(**change: Any) -> Any:
        arrays = {**dict(zip(names, args, strict=True)), **change}
        return native(*arrays.values(), **options)

    bad_card = plays.copy()
    bad_card.flat[0] = 105
    with pytest.raises(ValueError, match="plays holds 105, not a card of this deck"):
        call(plays=bad_card)
    with pytest.raises(ValueError, match="capacity"):
        call(counts=counts + 5)
    unsorted = hands.copy()
    unsorted[0, :2] = hands[0, 1::-1]
    with pytest.raises(ValueError, match="not ascending"):
        call(hands=unsorted)
    mixed = first.copy()
    mixed[0] = 7
    with pytest.raises(ValueError, match="all given or all 0"):
        call(first=mixed)
    taken = np.full(3, -1, np.int64)
    k, r = lasts.shape
    s, t, o = plays.shape
    with pytest.raises(ValueError, match="taken holds 24 bytes"):
        _native.playouts(
            lasts, counts, heads, hands, first, plays, salt, options["bulls"], options["odds"],
            taken, np.empty((k, s, t), np.int64), k, r, hands.shape[1], s, t, o, 5, 104, 0.5,
        )  # fmt: skip
    assert (taken == -1).all()
    with pytest.raises(TypeError):
        _native.playouts(lasts)


def test_mc_plays_the_same_games_with_native_and_numpy_playouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """An install without the C module (no compiler) plays exactly the games of one with it."""
    _batch_playouts("native")
    from games.classic.sim import playouts as batch

    bot = functools.partial(MonteCarloBot, playouts="numpy")
    rand = reference_bot("classic", "random")
    variant = make_variant("classic", {"players": 4, "hands": 2, "target": None})
    native = [play_match(variant, [bot, bot, rand, rand], seed).transcript.digest() for seed in (1, 2)]
    calls: list[int] = []

    def numpy_batch(*args: Any, **options: Any) -> Any:
        calls.append(1)
        return batch.playouts_numpy(*args, **options)

    monkeypatch.setattr(batch, "playouts", numpy_batch)
    numpy = [play_match(variant, [bot, bot, rand, rand], seed).transcript.digest() for seed in (1, 2)]
    assert calls, "the bot played the numpy batch in the second run"
    assert native == numpy


def test_batch_playouts_greedy_plays_what_the_python_greedy_plays() -> None:
    """On any rows and hand, the batch greedy policy's card is the pure-Python one's."""
    np = pytest.importorskip("numpy")
    from games.classic.sim import playouts as batch

    rng = random.Random(3)
    for _ in range(500):
        _, rows, hands = _random_position(rng, professional=False)
        capacity = max(len(row) for row in rows) + rng.randint(0, 2)
        odds = take_odds(len(hands) - 1, 40, capacity, 104)
        table = _Table.of(rows, BULLS)
        hand = hands[0]
        expected = _greedy(list(hand), table.lasts, table.counts, table.heads, capacity, odds)
        pick = batch._greedy(
            np.array([hand], np.int64),
            np.array([[row[-1] for row in rows]]),
            np.array([[len(row) for row in rows]]),
            np.array([[row_heads(row) for row in rows]]),
            capacity,
            np.array(odds),
            104,
        )
        assert hand[int(pick[0])] == expected, (rows, hand, capacity)


def test_mc_plays_the_same_from_the_same_seed() -> None:
    for playouts in ("numpy", "python"):
        if playouts == "numpy":
            pytest.importorskip("numpy")
        bot = functools.partial(MonteCarloBot, 2000, playouts=playouts)
        rand = reference_bot("classic", "random")
        variant = make_variant("classic", {"players": 4, "hands": 2, "target": None})
        one, two = (play_match(variant, [bot, bot, rand, rand], 5) for _ in range(2))
        assert one.transcript.digest() == two.transcript.digest()
        other = play_match(variant, [bot, bot, rand, rand], 6)
        assert other.transcript.digest() != one.transcript.digest()


def test_mc_batch_and_python_playouts_are_both_good() -> None:
    """Both kinds of playouts take far fewer bull heads than random play on the same hands."""
    pytest.importorskip("numpy")
    variant = make_variant("classic", {"players": 4, "hands": 1, "target": None})
    rand = reference_bot("classic", "random")
    for playouts in ("numpy", "python"):
        bot = functools.partial(MonteCarloBot, 4000, playouts=playouts)
        seats = [bot, rand, rand, rand]
        total = sum(play_match(variant, seats, seed).outcome.scores[0] for seed in range(40))
        assert total / 40 < 8.0, playouts


def test_mc_rejects_bad_playouts() -> None:
    with pytest.raises(ValueError, match="'auto', 'numpy' or 'python'"):
        MonteCarloBot(playouts="numba")


def test_mc_plays_without_numpy() -> None:
    """The base install has no numpy: the bot plays its pure-Python playouts there."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from games.classic.montecarlo import MonteCarloBot\n"
        "from bot_sdk.bots import reference_bot\n"
        "from bot_sdk.play import play_match\n"
        "from referee.rules.registry import make_variant\n"
        "import functools\n"
        "assert not MonteCarloBot().batch\n"
        "try:\n"
        "    MonteCarloBot(playouts='numpy')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "variant = make_variant('classic', {'players': 3, 'hands': 1, 'target': None})\n"
        "rand = reference_bot('classic', 'random')\n"
        "result = play_match(variant, [functools.partial(MonteCarloBot, 500), rand, rand], 1)\n"
        "print(result.outcome.scores, 'numpy' in sys.modules and sys.modules['numpy'] is not None)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "MonteCarloBot's numpy playouts need numpy: pip install 'sixnimmt-arena[sim]'"
    assert lines[1].endswith("False")
