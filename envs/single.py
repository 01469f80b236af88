"""A Gymnasium environment of one seat against chosen bots: the AEC game with the other seats played.

The other seats are bot objects, reference bots of the game by name (``games/<g>/bots.py``:
``random``, ``heuristic`` …) or any :class:`~bot_sdk.bot.Bot` class, made fresh each episode and
seeded per match and seat as the SDK's runners seed them; they see their own views and the
public events, as in ``sixnimmt play``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from bot_sdk.bot import Bot
from bot_sdk.bots import reference_bot
from envs.core import GameEnv
from referee.rules.chance import seat_seed

Opponent = str | type[Bot] | Callable[[], Bot]


class SeatEnv(gym.Env):
    """One seat (``seat``) of an AEC game env; ``opponents`` play the other seats, in seat order.

    ``step`` takes the seat's action index and plays the other seats until the seat decides again
    or the game ends; the reward is the seat's change of score over that stretch (signed so more
    is better), and ``terminated`` says the game is over. ``info["action_mask"]`` repeats the
    observation's mask, as masked-policy libraries look for it there.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012 (an instance attribute of gym.Env)

    def __init__(
        self,
        game: GameEnv,
        opponents: Sequence[Opponent] | str = "random",
        *,
        seat: int = 0,
        render_mode: str | None = None,
    ) -> None:
        players = game.variant.players
        if not 0 <= seat < players:
            raise ValueError(f"seat {seat}: a {players}-player game has seats 0 … {players - 1}")
        if isinstance(opponents, str):
            opponents = opponents.split(",")
        if len(opponents) == 1:
            opponents = list(opponents) * (players - 1)
        if len(opponents) != players - 1:
            raise ValueError(f"{players - 1} opponents for a {players}-player game, got {len(opponents)}")
        self.game = game
        self.seat = seat
        self.agent = game.possible_agents[seat]
        self.factories: list[Callable[[], Bot]] = [self._factory(o) for o in opponents]
        self.observation_space = game.observation_space(self.agent)
        self.action_space = game.action_space(self.agent)
        self.render_mode = render_mode
        self.game.render_mode = render_mode
        self.bots: dict[int, Bot] = {}

    def _factory(self, opponent: Opponent) -> Callable[[], Bot]:
        if isinstance(opponent, str):
            return reference_bot(self.game.variant.name, opponent.strip())
        return opponent

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """A new game; ``seed`` is the match seed (the deal and the opponents' generators)."""
        super().reset(seed=seed)
        match_seed = int(seed) if seed is not None else int(self.np_random.integers(2**63))
        self.game.reset(seed=match_seed)
        config = self.game.variant.config_json()
        others = [s for s in range(self.game.variant.players) if s != self.seat]
        self.bots = {}
        for seat, factory in zip(others, self.factories, strict=True):
            bot = factory()
            bot.seat = seat
            bot.rng = random.Random(seat_seed(match_seed, seat))
            bot.on_start(seat, self.game.variant.name, config)
            self.bots[seat] = bot
        self._play_others()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._over():
            raise RuntimeError("the game is over: reset() first")
        before = self._score()
        self.game.step(action)
        illegal = self.game.infos.get(self.agent, {}).get("illegal_action", False)
        self._play_others()
        reward = float(self.game._sign * (self._score() - before))
        info = self._info()
        if illegal:
            info["illegal_action"] = True
        return self._observe(), reward, self._over(), False, info

    def _score(self) -> int:
        assert self.game.game is not None
        return self.game.encoding.scores(self.game.game.state)[self.seat]

    def _play_others(self) -> None:
        """Let the bots answer until this seat decides or the game ends."""
        game = self.game
        while not self._over() and game.agent_selection != self.agent:
            self._deliver()
            seat = game.possible_agents.index(game.agent_selection)
            action = self.bots[seat].decide(game.view(seat))
            decision = game.decision(seat)
            assert decision is not None
            if action not in decision.options:
                raise ValueError(f"the bot in seat {seat} answered {action!r}, not one of {decision.options}")
            game.play(seat, action)
        self._deliver()
        if self._over() and game.game is not None and (outcome := game.game.outcome()) is not None:
            for bot in self.bots.values():
                bot.on_game_over(outcome)

    def _deliver(self) -> None:
        if self.game.events:
            events, self.game.events = self.game.events, []
            for bot in self.bots.values():
                bot.on_events(events)

    def _over(self) -> bool:
        return self.game.terminations.get(self.agent, True)

    def _observe(self) -> dict[str, np.ndarray]:
        return self.game.observe(self.agent)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.game.encoding.mask(self.game.decision(self.seat))}

    def render(self) -> str | None:
        return self.game.render()
