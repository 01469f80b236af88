"""6 nimmt! Junior as an RL environment: the basic, advanced and experts' games with their options.

A card is its id in the config's deck (``0 … cards - 1``). Actions, by the decisions each game
asks: the basic game's row ``r`` is index ``r``; the advanced game's card ``c`` into row ``r`` is
``c * rows + r``; the experts' game plays card ``c`` at index ``c`` and its row ``r`` at
``cards + r``. The observation is :class:`JuniorEncoding`'s layout (docs/envs.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.core import Encoding, GameEnv, Part, rotated
from games.junior.rules.junior import Junior, JuniorState
from games.junior.rules.junior_table import JuniorView
from referee.rules.core import Action, Decision, DecisionKind
from referee.rules.registry import make_variant

PHASES = ("draw", "play", "card", "row")
"""The phases in which a seat decides (the view's ``phase``), one-hot in the observation."""


class JuniorEncoding(Encoding):
    """A Junior seat's view as a vector; its decisions as one ``Discrete`` action space."""

    def __init__(self, variant: Junior[Any]) -> None:
        self.mode = variant.mode
        self.deck = variant.deck
        self.cards = len(self.deck.cards)
        self.cows = len(self.deck.cows)
        self.rows = variant.config.rows
        self.players = variant.config.players
        card_rows = self.cards * self.rows
        self.action_size = {"basic": self.rows, "advanced": card_rows, "experts": self.cards + self.rows}[
            self.mode
        ]
        super().__init__(variant)

    def layout(self) -> Sequence[Part]:
        n, k, rows = self.cards, self.cows, self.rows
        return (
            Part("hand", n, 1, "1 for each card id in this seat's hand"),
            Part("rows", rows * n, 1, "row by row, 1 for each card id in the row"),
            Part("row_last", rows * n, 1, "row by row, 1 at the row's last card"),
            Part("row_cows", rows * k, 1, "row by row, 1 for each cow on the row's cards"),
            Part("row_length", rows, 1, "each row's number of cards / cards in the deck"),
            Part("card", n, 1, "the face-up card waiting for its row (basic: drawn; experts: played)"),
            Part("card_cows", k, 1, "that card's cows"),
            Part("collected", n, 1, "1 for every card some seat collected"),
            Part("scores", self.players, 1, "cards collected / cards in the deck, own seat first"),
            Part("hand_sizes", self.players, 1, "cards in hand / cards in the deck, own seat first"),
            Part("pile", 1, 1, "cards in the draw pile / cards in the deck"),
            Part("to_move", 1, 1, "1 when it is this seat's turn"),
            Part("phase", len(PHASES), 1, "one-hot: " + ", ".join(PHASES)),
        )

    def fill(self, view: JuniorView, out: dict[str, np.ndarray]) -> None:
        n = self.cards
        cows = self.deck.cards
        out["hand"][list(view.hand)] = 1
        for r, row in enumerate(view.rows):
            out["rows"][[r * n + c for c in row]] = 1
            if row:
                out["row_last"][r * n + row[-1]] = 1
            out["row_cows"][[r * self.cows + cow for c in row for cow in cows[c]]] = 1
            out["row_length"][r] = len(row) / n
        if view.card is not None:
            out["card"][view.card] = 1
            out["card_cows"][list(cows[view.card])] = 1
        out["collected"][[c for album in view.collected for c in album]] = 1
        out["scores"][:] = np.asarray(rotated(view.scores, view.seat), dtype=np.float32) / n
        out["hand_sizes"][:] = np.asarray(rotated(view.hand_sizes, view.seat), dtype=np.float32) / n
        out["pile"][0] = view.pile_size / n
        out["to_move"][0] = float(view.to_move == view.seat)
        if view.phase in PHASES:
            out["phase"][PHASES.index(view.phase)] = 1

    def index(self, decision: Decision, option: Action, position: int) -> int:
        if decision.kind is DecisionKind.CARD_ROW:
            assert isinstance(option, tuple)
            card, row = option
            return int(card * self.rows + row)
        assert isinstance(option, int)
        if decision.kind is DecisionKind.CARD:
            return option
        return option + (self.cards if self.mode == "experts" else 0)

    def scores(self, state: JuniorState) -> tuple[int, ...]:
        return tuple(len(album) for album in state.collected)


def junior_encoding(variant: str = "junior-basic", config: dict[str, Any] | None = None) -> JuniorEncoding:
    """The encoding of a Junior game: ``junior-basic``, ``junior-advanced`` or ``junior-experts``."""
    game = make_variant(variant, config or {})
    if not isinstance(game, Junior):
        raise ValueError(f"{variant!r} is not a Junior game (junior-basic, junior-advanced, junior-experts)")
    return JuniorEncoding(game)


def env(variant: str = "junior-basic", render_mode: str | None = None, **options: Any) -> GameEnv:
    """The Junior AEC environment of ``variant`` with the engine's ``options``."""
    return GameEnv(junior_encoding(variant, options), render_mode=render_mode)


def basic_env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The basic game's AEC environment (``junior-basic``); Junior's ``GameSpec.envs`` names it."""
    return env("junior-basic", render_mode, **options)


def advanced_env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The advanced game's AEC environment (``junior-advanced``)."""
    return env("junior-advanced", render_mode, **options)


def experts_env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The experts' game's AEC environment (``junior-experts``)."""
    return env("junior-experts", render_mode, **options)
