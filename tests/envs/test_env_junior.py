"""The Junior environments: the basic, advanced (with nuisance) and experts' games."""

from __future__ import annotations

import random

import numpy as np
import pytest
from envkit import check_game, random_episode

from envs.junior import env, junior_encoding
from envs.single import SeatEnv

pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

GAMES = [
    ("junior-basic", {}),
    ("junior-basic", {"players": 2}),
    ("junior-advanced", {}),
    ("junior-advanced", {"nuisance": True, "players": 3}),
    ("junior-experts", {}),
    ("junior-experts", {"players": 6, "row_limit": 4}),
]


@pytest.mark.parametrize(("variant", "options"), GAMES, ids=lambda v: str(v))
def test_the_libraries_api_tests_pass_and_episodes_verify(variant: str, options: dict[str, object]) -> None:
    check_game(env(variant, **options), SeatEnv(env(variant, **options), "random"), games=2, cycles=200)


@pytest.mark.parametrize(
    ("variant", "size"), [("junior-basic", 4), ("junior-advanced", 52 * 4), ("junior-experts", 56)]
)
def test_each_game_has_the_actions_it_asks_for(variant: str, size: int) -> None:
    assert junior_encoding(variant).action_size == size


def test_nuisance_rewards_fewer_cards() -> None:
    game = env("junior-advanced", nuisance=True)
    random_episode(game, 3, random.Random(3))
    totals = {agent: 0.0 for agent in game.possible_agents}
    game.reset(seed=3)
    rng = random.Random(3)
    while game.agents:
        agent = game.agent_selection
        observation, _, terminated, _, _ = game.last()
        totals[agent] += game._cumulative_rewards[agent]
        if terminated:
            game.step(None)
            continue
        game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert list(totals.values()) == [-s for s in game.game.outcome().scores]


def test_the_seat_env_plays_against_the_junior_heuristic() -> None:
    seat = SeatEnv(env("junior-experts"), "heuristic")
    _, info = seat.reset(seed=1)
    done = False
    while not done:
        _, _, done, _, info = seat.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert seat.game.game.outcome() is not None


def test_not_a_junior_game() -> None:
    with pytest.raises(ValueError, match="not a Junior game"):
        junior_encoding("classic")
