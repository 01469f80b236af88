"""The board game's environments: basic, with luck cards, pro, and pro with luck cards."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from envkit import check_game

from envs.board import board_encoding, env
from envs.single import SeatEnv

pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

GAMES = [{}, {"luck": True}, {"pro": True}, {"pro": True, "luck": True, "players": 6}, {"players": 2}]


@pytest.mark.parametrize(
    "options", GAMES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "basic"
)
def test_the_libraries_api_tests_pass_and_episodes_verify(options: dict[str, object]) -> None:
    check_game(env(**options), SeatEnv(env(**options), "random"), games=2, cycles=150)


def test_tile_pairs_are_numbered_as_combinations() -> None:
    enc = board_encoding()
    numbers = [enc.pair(a, b) for a, b in itertools.combinations(range(1, enc.tiles + 1), 2)]
    assert numbers == list(range(enc.pairs))


def test_the_seat_env_plays_against_the_board_heuristic() -> None:
    seat = SeatEnv(env(pro=True, luck=True), "heuristic")
    _, info = seat.reset(seed=2)
    done = False
    while not done:
        _, _, done, _, info = seat.step(int(np.flatnonzero(info["action_mask"])[-1]))
    assert seat.game.game.outcome() is not None


def test_random_pro_games_with_luck_ask_every_kind_of_decision_and_mask_it_exactly() -> None:
    """Every segment is exercised: each decision kind comes up, its options at distinct indices."""
    game = env(pro=True, luck=True)
    rng = np.random.default_rng(0)
    kinds = set()
    for seed in range(6):
        game.reset(seed=seed)
        while game.agents:
            observation, _, terminated, _, _ = game.last()
            if terminated:
                game.step(None)
                continue
            decision = game.decision(game.possible_agents.index(game.agent_selection))
            kinds.add(decision.kind.value)
            assert len(game.encoding.options(decision)) == len(decision.options)
            game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert kinds == {"card", "cards", "row", "pile", "luck", "action_card"}
