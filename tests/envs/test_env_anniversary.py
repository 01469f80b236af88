"""The anniversary variant's environments: special cards, swaps, blocked and 7 nimmt! rows."""

from __future__ import annotations

import numpy as np
import pytest
from envkit import check_game

from envs.anniversary import env
from envs.single import SeatEnv

pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

GAMES = [{}, {"players": 8}, {"players": 3, "specials_per_turn": 2, "specials_each": 5, "block_end": "turn"}]


@pytest.mark.parametrize(
    "options", GAMES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_the_libraries_api_tests_pass_and_episodes_verify(options: dict[str, object]) -> None:
    check_game(env(**options), SeatEnv(env(**options), "random"), games=2, cycles=200)


def test_random_games_play_every_special_card_and_swap_at_distinct_indices() -> None:
    game = env()
    rng = np.random.default_rng(0)
    codes = set()
    for seed in range(4):
        game.reset(seed=seed)
        while game.agents:
            observation, _, terminated, _, _ = game.last()
            if terminated:
                game.step(None)
                continue
            decision = game.decision(game.possible_agents.index(game.agent_selection))
            assert len(game.encoding.options(decision)) == len(decision.options)
            codes.update(o[0] for o in decision.options if isinstance(o, tuple) and o)
            game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert codes == set(range(8))  # the swap (0) and the seven kinds


def test_the_seat_env_plays_against_the_anniversary_heuristic() -> None:
    seat = SeatEnv(env(), "heuristic")
    _, info = seat.reset(seed=5)
    done = False
    while not done:
        _, _, done, _, info = seat.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert seat.game.game.outcome() is not None
