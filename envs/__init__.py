"""Reinforcement-learning environments for the games: PettingZoo AEC and a Gymnasium single seat.

An optional extra (``pip install 'sixnimmt-arena[rl]'``): numpy, gymnasium and pettingzoo, which
the base install (the SDK) never imports. See docs/envs.md.

    from envs import make_env, make_seat_env
    game = make_env("classic", players=5)                       # PettingZoo AEC, every seat an agent
    seat = make_seat_env("board", "random,heuristic", pro=True)  # Gymnasium, seat 0 against two bots
    seat = gymnasium.make("sixnimmt/junior-experts-v0", opponents="heuristic")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium

from referee.rules.registry import find_variant
from referee.rules.spec import declared_games, resolve

if TYPE_CHECKING:
    from envs.core import GameEnv
    from envs.single import Opponent, SeatEnv


def environments() -> dict[str, str]:
    """Each variant with an environment → the ``"module:function"`` that makes it, as the installed
    games' specs name them (``GameSpec.envs``), in the games' order; no engine is imported."""
    return {variant: ref for game in declared_games() for variant, ref in game.envs.items()}


GAMES: dict[str, str] = environments()
"""Each variant with an environment, and the ``"module:function"`` that makes it."""


def make_env(variant: str = "classic", *, render_mode: str | None = None, **options: Any) -> GameEnv:
    """The AEC environment of ``variant`` (a name or an alias) with the engine's ``options``."""
    name = find_variant(variant).name
    if name not in GAMES:
        raise ValueError(f"no environment for {name!r}; environments: {', '.join(GAMES)}")
    return resolve(GAMES[name])(render_mode=render_mode, **options)  # type: ignore[no-any-return]


def make_seat_env(
    variant: str = "classic",
    opponents: str | list[Opponent] = "random",
    *,
    seat: int = 0,
    render_mode: str | None = None,
    **options: Any,
) -> SeatEnv:
    """The Gymnasium environment of one ``seat`` of ``variant`` against ``opponents``."""
    from envs.single import SeatEnv

    return SeatEnv(make_env(variant, **options), opponents, seat=seat, render_mode=render_mode)


for _name in GAMES:
    gymnasium.register(f"sixnimmt/{_name}-v0", entry_point="envs:make_seat_env", kwargs={"variant": _name})
