"""Classic 6 nimmt! as an RL environment: every config of the engine (players, Tactics, Professional,
target or hands), its observation and its action table.

Actions: index ``card - 1`` plays a card (``0 … top_card - 1``), index ``top_card + r`` takes row
``r`` for a low card. The observation is :class:`ClassicEncoding`'s layout (docs/envs.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.core import Encoding, GameEnv, Part, rotated
from games.classic.rules.classic import Classic, ClassicConfig, ClassicState, ClassicView
from referee.rules.cards import bull_table
from referee.rules.config import config_from_mapping
from referee.rules.core import Action, Decision, DecisionKind

_MAX_HEADS = 7
"""The most bull heads on one card (55)."""


class ClassicEncoding(Encoding):
    """A classic seat's view as a vector; cards and rows as one ``Discrete`` action space."""

    def __init__(self, variant: Classic) -> None:
        cfg = variant.config
        self.config: ClassicConfig = cfg
        self.top = cfg.top_card
        self.bulls = bull_table(self.top)
        self.action_size = self.top + cfg.rows
        deck_heads = sum(self.bulls[1 : self.top + 1])
        # A seat's score never passes the target by more than one hand's takes (all the cards).
        bounds = []
        if cfg.target is not None:
            bounds.append(cfg.target - 1 + deck_heads)
        if cfg.hands is not None:
            bounds.append(cfg.hands * deck_heads)
        self.score_scale = float(cfg.target or 66)
        self.score_high = min(bounds) / self.score_scale
        super().__init__(variant)

    def layout(self) -> Sequence[Part]:
        cfg, top, n = self.config, self.top, self.config.players
        return (
            Part("hand", top, 1, "1 at card - 1 for each card in this seat's hand"),
            Part(
                "rows",
                cfg.rows * cfg.row_capacity,
                1,
                "row by row, each row's cards / top_card, 0 past its end",
            ),
            Part("row_heads", cfg.rows, 1, "each row's bull heads / (row_capacity * 7)"),
            Part("taken", top, 1, "1 for every card some seat took this hand"),
            Part("revealed_mine", top, 1, "this seat's face-up card while a low card's row is chosen"),
            Part(
                "revealed_others", top, 1, "the other seats' face-up cards while a low card's row is chosen"
            ),
            Part(
                "scores", n, self.score_high, "game scores / (target or 66), own seat first, then seat order"
            ),
            Part(
                "hand_heads",
                n,
                n * cfg.hand_size + cfg.rows,
                "bull heads taken this hand / 7, own seat first",
            ),
            Part("phase", 2, 1, "one-hot: a card to play, a row to take"),
            Part("turn", 1, 1, "turns played this hand / hand_size"),
            Part("hand_no", 1, 1, "this hand's number / hands (without a number of hands: / 100, at most 1)"),
        )

    def fill(self, view: ClassicView, out: dict[str, np.ndarray]) -> None:
        cfg = self.config
        out["hand"][[c - 1 for c in view.hand]] = 1
        rows = out["rows"]
        for r, row in enumerate(view.rows):
            base = r * cfg.row_capacity
            rows[base : base + len(row)] = np.asarray(row, dtype=np.float32) / self.top
            out["row_heads"][r] = sum(self.bulls[c] for c in row) / (cfg.row_capacity * _MAX_HEADS)
        taken = [c - 1 for pile in view.piles for c in pile]
        out["taken"][taken] = 1
        for card, seat in view.revealed:
            out["revealed_mine" if seat == view.seat else "revealed_others"][card - 1] = 1
        out["scores"][:] = np.asarray(rotated(view.scores, view.seat), dtype=np.float32) / self.score_scale
        heads = [sum(self.bulls[c] for c in pile) for pile in view.piles]
        out["hand_heads"][:] = np.asarray(rotated(heads, view.seat), dtype=np.float32) / _MAX_HEADS
        out["phase"][1 if view.phase == "row" else 0] = 1
        out["turn"][0] = view.turn / cfg.hand_size
        out["hand_no"][0] = min(view.hand_no / (cfg.hands or 100), 1)

    def index(self, decision: Decision, option: Action, position: int) -> int:
        assert isinstance(option, int)
        if decision.kind is DecisionKind.ROW:
            return self.top + option
        return option - 1

    def scores(self, state: ClassicState) -> tuple[int, ...]:
        return state.scores


def classic_encoding(config: ClassicConfig | dict[str, Any] | None = None) -> ClassicEncoding:
    """The encoding of a classic game with ``config`` (a config, a mapping of options, or the default)."""
    if isinstance(config, dict):
        config = config_from_mapping(ClassicConfig, config)
    return ClassicEncoding(Classic(config))


def env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The classic AEC environment; ``options`` are the engine's (``players=5, professional=True`` …)."""
    return GameEnv(classic_encoding(options), render_mode=render_mode)
