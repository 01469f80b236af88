"""What every game's environment is tested for: the libraries' API tests, masks that are exactly
the engine's options, seeding, episodes that verify as transcripts, observations from the view."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test

from envs.core import GameEnv
from envs.single import SeatEnv
from referee import wire
from referee.rules.core import Decision, View
from referee.rules.transcript import verify
from sixnimmt.v1 import game_pb2


def through_the_wire(variant: str, view: View, decision: Decision | None) -> View:
    """The view as the SDK receives it from the referee: through bytes."""
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(1, "m", variant, decision, view, 1000, 1000, out)
    return wire.view_from_wire(game_pb2.DecisionRequest.FromString(out.SerializeToString()))


def random_episode(env: GameEnv, seed: int, rng: random.Random, *, wire: bool = False) -> list[np.ndarray]:
    """Play one game with random legal indices, checking each mask against the engine (and with
    ``wire``, each observation against the one of the view the SDK receives); every observation."""
    env.reset(seed=seed)
    seen = []
    while env.agents:
        agent = env.agent_selection
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert env.observation_space(agent).contains(observation), agent
        seen.append(observation["observation"])
        decision = env.decision(env.possible_agents.index(agent))
        assert decision is not None
        legal = np.flatnonzero(observation["action_mask"])
        options = env.encoding.options(decision)
        assert len(options) == len(decision.options), "two options share an action index"
        assert sorted(options) == list(legal)
        if wire:
            sdk_view = through_the_wire(env.variant.name, env.view(agent), decision)
            assert np.array_equal(observation["observation"], env.encoding.observe(sdk_view))
            assert np.array_equal(observation["action_mask"], env.encoding.mask(sdk_view.decision))
        env.step(int(rng.choice(legal)))
    return seen


def env_maker(env: GameEnv) -> Any:
    """A function that makes fresh copies of ``env`` (same game and config), as PettingZoo's tests want."""

    def make(render_mode: str | None = None) -> GameEnv:
        return GameEnv(type(env.encoding)(type(env.variant)(env.variant.config)), render_mode=render_mode)

    return make


def check_game(env: GameEnv, seat_env: SeatEnv, *, games: int = 3, cycles: int = 300) -> None:
    """The whole check of one game's environments."""
    api_test(env, num_cycles=cycles)
    make = env_maker(env)
    seed_test(make, num_cycles=cycles)
    render_test(make)
    check_env(seat_env, skip_render_check=True)
    for seed in range(games):
        first = random_episode(env, seed, random.Random(seed), wire=seed == 0)
        outcome = verify(env.transcript())
        assert outcome == env.game.outcome()
        again = random_episode(env, seed, random.Random(seed))
        assert len(first) == len(again) and all(
            np.array_equal(a, b) for a, b in zip(first, again, strict=True)
        )


def seat_returns(seat_env: SeatEnv, seeds: range, choose: Any) -> list[float]:
    """The seat's return per game, ``choose(observation, info)`` picking its indices."""
    returns = []
    for seed in seeds:
        observation, info = seat_env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            observation, reward, done, truncated, info = seat_env.step(choose(observation, info))
            assert not truncated
            total += reward
        returns.append(total)
    return returns
