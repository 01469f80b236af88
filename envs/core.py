"""A PettingZoo AEC environment over any game's engine, through the core interface.

The environment drives the real rules (:class:`~referee.rules.core.Variant`: pending decisions,
chance, ``apply``) with the same loop as every runner (:class:`~referee.rules.transcript.Playthrough`),
so no rule is written twice and every episode is a transcript that ``sixnimmt verify`` accepts.
What a game adds is an :class:`Encoding`: the observation vector of a seat's view and the table
between a decision's legal options and the indices of one ``Discrete`` action space.

Simultaneous decisions (a classic turn, a board-game round) are taken one agent after the other,
in seat order; the engine applies them together once every pending seat has chosen, and an
agent's observation is computed from the engine's view of the state before the step, so nobody
sees a card chosen before theirs.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

from referee.rules.core import CHANCE, Action, Decision, Event, Variant, View
from referee.rules.transcript import Playthrough, Transcript

_SEED_BOUND = 2**63
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Part:
    """One named slice of an observation vector."""

    name: str
    size: int
    high: float
    """The largest value its elements take."""
    doc: str
    low: float = 0.0
    """The smallest value its elements take."""


class Encoding(ABC):
    """A game's observation of a view and its action table, for one variant's config.

    :meth:`observe` reads only the view the engine computes for a seat (what the SDK's bot
    receives for that seat), so an observation holds exactly what that seat may know. Actions
    are indices of ``Discrete(action_size)``; :meth:`index` places each legal option of a
    decision there, and the action mask marks exactly the decision's options.
    """

    def __init__(self, variant: Variant[Any, Any]) -> None:
        self.variant = variant
        self.parts: tuple[Part, ...] = tuple(self.layout())
        self.offsets: dict[str, slice] = {}
        start = 0
        for part in self.parts:
            self.offsets[part.name] = slice(start, start + part.size)
            start += part.size
        self.observation_size = start
        self.low = np.concatenate([np.full(p.size, p.low, dtype=np.float32) for p in self.parts])
        self.high = np.concatenate([np.full(p.size, p.high, dtype=np.float32) for p in self.parts])

    action_size: int
    """How many indices the action space has."""

    @abstractmethod
    def layout(self) -> Sequence[Part]:
        """The parts of the observation vector, in order."""

    @abstractmethod
    def fill(self, view: Any, out: dict[str, np.ndarray]) -> None:
        """Write ``view`` into the parts of ``out`` (zeroed arrays, one per part name)."""

    @abstractmethod
    def index(self, decision: Decision, option: Action, position: int) -> int:
        """The action index of ``option``, the ``position``-th legal option of ``decision``."""

    def observe(self, view: View) -> np.ndarray:
        """A seat's view as a float32 vector (its parts in :attr:`parts` order)."""
        vector = np.zeros(self.observation_size, dtype=np.float32)
        self.fill(view, {name: vector[where] for name, where in self.offsets.items()})
        return vector

    def options(self, decision: Decision) -> dict[int, Action]:
        """The decision's legal options by action index."""
        return {self.index(decision, option, i): option for i, option in enumerate(decision.options)}

    def mask(self, decision: Decision | None) -> np.ndarray:
        """1 at the index of every legal option of ``decision``, 0 elsewhere (all 0 for none)."""
        mask = np.zeros(self.action_size, dtype=np.int8)
        if decision is not None:
            mask[list(self.options(decision))] = 1
        return mask

    def scores(self, state: Any) -> tuple[int, ...]:
        """Every seat's score in ``state`` (for the rewards); the view's ``scores`` by default."""
        return tuple(self.variant.view(state, 0).scores)  # type: ignore[attr-defined]

    def describe(self) -> list[dict[str, Any]]:
        """The observation layout as data: each part's name, slice, bound and meaning."""
        return [
            {
                "name": p.name,
                "start": self.offsets[p.name].start,
                "size": p.size,
                "low": p.low,
                "high": p.high,
                "doc": p.doc,
            }
            for p in self.parts
        ]


def rotated(values: Sequence[T], seat: int) -> list[T]:
    """``values`` per seat, starting with ``seat`` and going on in seat order (own seat first)."""
    return [*values[seat:], *values[:seat]]


class GameEnv(AECEnv):  # type: ignore[misc]
    """A PettingZoo AEC environment of one variant with one config; agents ``player_0`` … in seat order.

    Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``. The reward of
    a step is each seat's change of score, signed so that more is better (minus the bull heads a
    classic seat took). An action that is not legal is replaced by the engine's default action
    for the decision (as the referee does for a bot's illegal answer) and flagged in the agent's
    ``infos`` as ``"illegal_action": True``.
    """

    # The libraries declare metadata an instance attribute (a ClassVar would not type-check).
    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": ["ansi", "human"],
        "name": "sixnimmt_v0",
        "is_parallelizable": False,
    }

    def __init__(self, encoding: Encoding, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: one of {self.metadata['render_modes']}")
        self.encoding = encoding
        self.variant = encoding.variant
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"sixnimmt_{self.variant.name.replace('-', '_')}_v0"}
        self.possible_agents = [f"player_{seat}" for seat in range(self.variant.players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation = spaces.Dict(
            {
                "observation": spaces.Box(encoding.low, encoding.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (encoding.action_size,), dtype=np.int8),
            }
        )
        self.observation_spaces = {agent: observation for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(encoding.action_size) for agent in self.possible_agents}
        self._sign = 1 if self.variant.higher_is_better else -1
        self._seeds = np.random.default_rng()
        self.game: Playthrough | None = None
        self.events: list[Event] = []
        """The public events since the caller last emptied the list (the single-seat wrapper does)."""

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- the episode -----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` is the match seed: the same seed deals the same cards as a referee's
        match of that seed; without one, the next seed of the generator the last seed started."""
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
            match_seed = int(seed)
        else:
            match_seed = int(self._seeds.integers(_SEED_BOUND))
        self.game = Playthrough(self.variant, match_seed)
        self.events = []
        self._chosen: dict[int, Action] = {}
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._resolve_chance()
        self._scores = self.encoding.scores(self.game.state)
        self._select()

    @property
    def seed(self) -> int:
        """This episode's match seed."""
        assert self.game is not None, "reset() first"
        return self.game.seed

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seats[agent]
        assert self.game is not None, "reset() first"
        view = self.variant.view(self.game.state, seat)
        return {
            "observation": self.encoding.observe(view),
            "action_mask": self.encoding.mask(self.decision(seat)),
        }

    def view(self, agent: str | int) -> View:
        """The engine's view of the current state for a seat (an agent name or a seat number)."""
        assert self.game is not None, "reset() first"
        seat = agent if isinstance(agent, int) else self._seats[agent]
        return self.variant.view(self.game.state, seat)

    def decision(self, seat: int) -> Decision | None:
        """The seat's pending decision, if it has one it has not answered yet."""
        assert self.game is not None, "reset() first"
        if seat in self._chosen:
            return None
        return next((d for d in self.game.pending() if d.seat == seat), None)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seats[agent]
        decision = self.decision(seat)
        assert decision is not None and self.game is not None
        legal = self.encoding.options(decision)
        chosen = legal.get(int(action)) if action is not None else None
        self.infos[agent] = {"illegal_action": chosen is None} if chosen is None else {}
        if chosen is None:
            chosen = self.variant.default_action(self.game.state, decision)
        self.play(seat, chosen)

    def play(self, seat: int, action: Action) -> None:
        """Answer the selected seat's decision with an engine action (a legal option of it).

        :meth:`step` with an index ends here; the single-seat wrapper's reference bots answer here.
        """
        assert self.game is not None and seat == self._seats[self.agent_selection]
        self._cumulative_rewards[self.agent_selection] = 0.0
        for agent in self.agents:
            self.rewards[agent] = 0.0
        self._chosen[seat] = action
        if all(d.seat in self._chosen for d in self.game.pending()):
            actions, self._chosen = self._chosen, {}
            self.events.extend(self.game.apply(actions))
            self._resolve_chance()
            scores = self.encoding.scores(self.game.state)
            for agent, now, before in zip(self.possible_agents, scores, self._scores, strict=True):
                self.rewards[agent] = float(self._sign * (now - before))
            self._scores = scores
            if not self.game.pending():
                for agent in self.agents:
                    self.terminations[agent] = True
        self._select()
        self._accumulate_rewards()

    def transcript(self) -> Transcript:
        """The episode so far as a transcript (``sixnimmt verify``/``replay`` read it when saved)."""
        assert self.game is not None, "reset() first"
        return self.game.transcript({"seats": list(self.possible_agents), "source": "envs"})

    def render(self) -> str | None:
        """The selected agent's view as JSON text: returned (``"ansi"``) or printed (``"human"``)."""
        if self.render_mode is None or self.game is None:
            return None
        text = json.dumps(self.view(self.agent_selection).to_json())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -- internals -------------------------------------------------------------------------------

    def _resolve_chance(self) -> None:
        assert self.game is not None
        while (pending := self.game.pending()) and pending[0].seat == CHANCE:
            self.events.extend(self.game.resolve_chance())

    def _select(self) -> None:
        """Select the first pending seat that has not chosen (the first agent once the game is over)."""
        assert self.game is not None
        waiting = [d.seat for d in self.game.pending() if d.seat not in self._chosen]
        self.agent_selection = self.possible_agents[waiting[0]] if waiting else self.agents[0]
