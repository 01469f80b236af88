"""The batch simulator against the real engine: the same deals and actions give the same states.

Every option combination (2–10 players, Tactics, Professional, to 66 or a number of hands):
random games are played through the engine (deals from its SeededChance, random cards and
rows), then the same deals and actions through the simulator, with policies that replay them.
At every decision of every game the simulator's state, converted with ``to_state``, must equal
the engine's whole state (rows, hands, takes, scores, turn, pending decisions), and so must the
final state with its outcome. Random play inside the compiled loop is checked the same way by
reading each turn's cards back from consecutive states and replaying them through the engine.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("numba")

from games.classic.rules.classic import PLAY, ROW, Classic, ClassicConfig, ClassicState  # noqa: E402
from games.classic.sim import SimulationError, Simulator  # noqa: E402
from referee.rules.chance import SeededChance  # noqa: E402
from referee.rules.core import CHANCE  # noqa: E402
from referee.rules.errors import ConfigError  # noqa: E402

COMBOS = [
    {"players": p, "tactics": t, "professional": pro, **end}
    for p, t, pro, end in itertools.product(
        range(2, 11), (False, True), (False, True), ({"target": 66}, {"target": None, "hands": 2})
    )
]
ODD = [  # other numbers, so that no array size is taken for granted
    {"players": 3, "rows": 2, "row_capacity": 3, "hand_size": 6, "deck": 30, "hands": 3, "target": None},
    {"players": 4, "rows": 1, "row_capacity": 1, "hand_size": 3, "hands": 2, "target": 20},
    {"players": 5, "rows": 6, "row_capacity": 2, "hand_size": 12, "professional": True, "target": 40},
    {"players": 2, "rows": 3, "row_capacity": 7, "hand_size": 20, "deck": 60, "tactics": True, "hands": 1},
]


@dataclass
class Recorded:
    """One engine game: its deals, actions, and its state at each decision."""

    deals: list[tuple[int, ...]] = field(default_factory=list)
    cards: dict[tuple[int, int], dict[int, int]] = field(default_factory=dict)
    at_play: dict[tuple[int, int], ClassicState] = field(default_factory=dict)
    rows: list[int] = field(default_factory=list)
    at_row: list[ClassicState] = field(default_factory=list)
    final: ClassicState | None = None


def engine_game(variant: Classic, seed: int) -> Recorded:
    rng = random.Random(seed)
    chance = SeededChance(seed)
    game = Recorded()
    state = variant.initial_state()
    while state.pending:
        pending = state.pending
        if pending[0].seat == CHANCE:
            deal = variant.sample_chance(state, chance)
            game.deals.append(deal)
            state, _ = variant.apply(state, {CHANCE: deal})
        elif state.phase == PLAY:
            key = (state.hand_no, state.turn)
            game.at_play[key] = state
            game.cards[key] = {d.seat: rng.choice(d.options) for d in pending}
            state, _ = variant.apply(state, game.cards[key])
        else:
            assert state.phase == ROW
            game.at_row.append(state)
            game.rows.append(rng.randrange(len(pending[0].options)))
            state, _ = variant.apply(state, {pending[0].seat: game.rows[-1]})
    game.final = state
    return game


def replay_in_simulator(config: ClassicConfig, games: list[Recorded]) -> int:
    """Play the recorded games in one batch; every state compared; the decisions compared."""
    sim = Simulator(config)
    batch = sim.new_games(len(games))
    k = max(len(g.deals) for g in games)
    deals = np.zeros((len(games), k, sim.deal_size), np.int64)
    for i, g in enumerate(games):
        for j, deal in enumerate(g.deals):
            deals[i, j] = deal
    rows_used = [0] * len(games)
    checked = [0]

    def cards(b: Any, ids: Any, seat: int) -> Any:
        out = []
        for i in ids.tolist():
            key = (int(b.hand_no[i]), int(b.turn[i]))
            if seat == 0:
                assert sim.to_state(b, i) == games[i].at_play[key], (i, key)
                checked[0] += 1
            out.append(games[i].cards[key][seat])
        return np.array(out)

    def rows(b: Any, ids: Any) -> Any:
        out = []
        for i in ids.tolist():
            assert sim.to_state(b, i) == games[i].at_row[rows_used[i]], (i, "row", rows_used[i])
            out.append(games[i].rows[rows_used[i]])
            rows_used[i] += 1
            checked[0] += 1
        return np.array(out)

    sim.play(batch, cards, rows, deals=deals)
    for i, g in enumerate(games):
        assert sim.to_state(batch, i) == g.final, i
        assert rows_used[i] == len(g.rows)
        assert g.final is not None and g.final.outcome is not None
        assert tuple(batch.scores[i].tolist()) == g.final.outcome.scores
    return checked[0]


@pytest.mark.slow
@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_same_deals_and_actions_give_the_same_states(combo: dict[str, Any]) -> None:
    config = ClassicConfig(**combo)
    variant = Classic(config)
    games = [engine_game(variant, 1000 * COMBOS.index(combo) + g) for g in range(40)]
    decisions = replay_in_simulator(config, games)
    assert decisions >= 40 * config.hand_size  # every turn of every game was compared


@pytest.mark.parametrize("combo", ODD, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_other_numbers_give_the_same_states(combo: dict[str, Any]) -> None:
    config = ClassicConfig(**combo)
    variant = Classic(config)
    games = [engine_game(variant, 77 + g) for g in range(60)]
    replay_in_simulator(config, games)


@pytest.mark.parametrize(
    "combo",
    [{"players": 4, "hands": 3, "target": None}, {"players": 7, "professional": True, "tactics": True}],
    ids=["p4", "p7-pro-tactics"],
)
@pytest.mark.parametrize("rows", ["cheapest", "random"])
def test_random_play_inside_the_kernel_follows_the_rules(combo: dict[str, Any], rows: str) -> None:
    """Seat 0 is a Python policy (so each turn stops in Python); the others play at random inside
    the kernel. Each turn's cards are read back from the hands, the deal from a hand's first
    state, the low cards' rows from the rows; the engine, given them, reaches the same states."""
    config = ClassicConfig(**combo)
    variant = Classic(config)
    sim = Simulator(config)
    batch = sim.new_games(150)
    seen: list[list[ClassicState]] = [[] for _ in range(batch.n)]

    def first_card(b: Any, ids: Any, seat: int) -> Any:
        for i in ids.tolist():
            seen[i].append(sim.to_state(b, i))
        return np.array([b.hand(i, seat)[(i + int(b.turn[i])) % int(b.held[i])] for i in ids.tolist()])

    sim.play(batch, [first_card] + ["random"] * (config.players - 1), rows, seed=5)
    turns = 0
    for i in range(batch.n):
        states = [*seen[i], sim.to_state(batch, i)]
        for before, after in itertools.pairwise(states):
            if after.hand_no != before.hand_no:
                continue  # a new deal in between: its cards are read from the next pair
            played = {s: set(before.hands[s]) - set(after.hands[s]) for s in range(config.players)}
            assert all(len(cards) == 1 for cards in played.values()), (i, before.turn)
            state, _ = variant.apply(before, {s: cards.pop() for s, cards in played.items()})
            assert after in reachable(variant, state), (i, before.turn)
            turns += 1
    assert turns > batch.n * 5


def reachable(variant: Classic, state: ClassicState) -> list[ClassicState]:
    """The states that end this turn, over every choice of row for its low cards."""
    if state.phase != ROW:
        return [state]
    seat = state.pending[0].seat
    ends = []
    for row in state.pending[0].options:
        ends += reachable(variant, variant.apply(state, {seat: row})[0])
    return ends


def test_states_of_every_phase_go_there_and_back() -> None:
    for combo in ({"players": 3}, {"players": 6, "professional": True, "hands": 2, "target": None}):
        variant = Classic(ClassicConfig(**combo))
        sim = Simulator(variant.config)
        states: list[ClassicState] = []
        for seed in range(30):
            game = engine_game(variant, seed)
            states += list(game.at_play.values())[::3] + game.at_row + [game.final]  # type: ignore[list-item]
        states.append(variant.initial_state())
        batch = sim.from_states(states)
        assert [sim.to_state(batch, i) for i in range(batch.n)] == states


def test_a_position_plays_out_and_scores() -> None:
    sim = Simulator({"players": 2, "hands": 1, "target": None})
    batch = sim.positions([(10, 11, 12, 13, 14), (50,), (60,), (70,)], [(15, 52), (1, 2)], n=64)
    sim.play(batch, ["random", lambda b, ids, s: b.hands[ids, s, 0]], seed=3)
    scores = sim.scores(batch)
    # Seat 1's 1 takes the cheapest row (50: 3 bull heads) first; seat 0's first card, 15 or
    # 52, is the sixth on the row of 10 … 14 (11 bull heads), and its second goes behind one.
    assert (scores == [11, 3]).all()
    assert batch.over().all()
    assert (sim.hand_bulls(batch) == scores).all()


def test_deterministic_from_its_seed() -> None:
    sim = Simulator({"players": 5})
    one, two, other = (sim.play(sim.new_games(200), seed=s).scores.copy() for s in (9, 9, 10))
    assert (one == two).all()
    assert (one != other).any()


def test_random_play_takes_what_random_bots_take_in_the_engine() -> None:
    """Random cards and random rows: the mean bull heads per hand as the engine's random play."""
    config = ClassicConfig(players=4, hands=1, target=None)
    variant = Classic(config)
    engine = []
    for seed in range(1500):
        rng = random.Random(seed)
        state = variant.initial_state()
        chance = SeededChance(seed)
        while state.pending:
            if state.pending[0].seat == CHANCE:
                action: dict[int, Any] = {CHANCE: variant.sample_chance(state, chance)}
            else:
                action = {d.seat: rng.choice(d.options) for d in state.pending}
            state, _ = variant.apply(state, action)
        engine.extend(state.scores)
    sim = Simulator(config)
    simulated = sim.play(sim.new_games(20000), rows="random", seed=1).scores.ravel()
    e, s = np.array(engine, float), simulated.astype(float)
    se = np.hypot(e.std() / np.sqrt(e.size), s.std() / np.sqrt(s.size))
    assert abs(e.mean() - s.mean()) < 4 * se, (e.mean(), s.mean())


def test_stops_after_the_hands_asked_for() -> None:
    sim = Simulator({"players": 4, "target": 10_000})
    batch = sim.play(sim.new_games(50), hands=3, seed=2)
    assert (batch.hand_no == 3).all() and (batch.phase == 0).all()
    sim.play(batch, hands=2, seed=3)
    assert (batch.hand_no == 5).all()


def test_bad_answers_say_so_in_one_line() -> None:
    sim = Simulator({"players": 3, "hands": 1, "target": None})
    batch = sim.new_games(4)
    with pytest.raises(SimulationError, match=r"game 0 of the batch: the policy chose card 999 for seat 1"):
        sim.play(batch, ["random", lambda b, ids, s: np.full(ids.size, 999), "random"])
    assert batch.held.tolist() == [10] * 4  # the refused turn changed nothing
    with pytest.raises(SimulationError, match=r"row 7: there are rows 0…3"):
        sim.play(sim.new_games(30), rows=lambda b, ids: np.full(ids.size, 7), seed=1)
    for kwargs, message in (
        ({"policy": "greedy"}, "a card policy is 'random' or a callable"),
        ({"policy": ["random"] * 2}, "one policy per seat: 3, got 2"),
        ({"rows": "best"}, "a row policy is"),
        ({"hands": 0}, "play at least one hand"),
        ({"deals": np.zeros((4, 1, 5))}, r"deals are \[games=4, k, deal size=34\]"),
    ):
        with pytest.raises(ConfigError, match=message):
            sim.play(sim.new_games(4), **kwargs)
    with pytest.raises(ConfigError):
        Simulator({"players": 11})
    with pytest.raises(ConfigError, match="3-seat simulator"):
        sim.from_states([Classic(ClassicConfig(players=4)).initial_state()])
