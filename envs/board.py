"""6 nimmt! Brettspiel (the board game) as an RL environment: basic, luck cards, pro, pro with luck.

Every decision the engine asks has its own segment of one ``Discrete`` action space, so an index
means the same action in every state (:data:`SEGMENTS`, in this order; ``T`` tiles, ``R`` rows):

- ``tile``: a tile ``t`` to play (``t - 1``); ``tiles``: two tiles ``a < b`` at once (their pair);
- ``row``: the row a take opens; ``pile``: the luck card kind taken for a clover;
- ``luck``: pass, "5 Plus Points", "Positive Oxen" on one tile or on a pair of the row's tiles;
- ``action``: pass, and each action card with its target (a row or a tile).

A tile pair ``a < b`` is numbered as in ``itertools.combinations(range(1, T + 1), 2)``.
The board's layout, the oxen on each tile and the score track are the config's, the same in
every state, so they are not in the observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.core import Encoding, GameEnv, Part, rotated
from games.board.rules.brettspiel import Brettspiel, BrettspielConfig, BrettspielState
from games.board.rules.brettspiel_round import PHASES
from games.board.rules.brettspiel_view import ActionCard, BrettspielView, LuckCard
from referee.rules.config import config_from_mapping
from referee.rules.core import Action, Decision, DecisionKind

SEGMENTS = ("tile", "tiles", "row", "pile", "luck", "action")
"""The action segments, in index order."""
_KIND_SEGMENT = {
    DecisionKind.CARD: "tile",
    DecisionKind.CARDS: "tiles",
    DecisionKind.ROW: "row",
    DecisionKind.PILE: "pile",
    DecisionKind.LUCK: "luck",
    DecisionKind.ACTION_CARD: "action",
}
_ROW_TARGETED = (ActionCard.STOP, ActionCard.MOVE_TO_FRONT, ActionCard.ATTACH_ASCENDING)
_TILE_TARGETED = (ActionCard.TILE_SWAP, ActionCard.ONE_MORE_TILE)
_KINDS = tuple(DecisionKind)


class BoardEncoding(Encoding):
    """A board-game seat's view as a vector; every decision as a segment of one action space."""

    def __init__(self, variant: Brettspiel) -> None:
        view = variant.view(variant.initial_state(), 0)
        self.config: BrettspielConfig = variant.config
        self.board = view.board
        self.tiles = len(view.oxen) - 1
        self.rows = len(self.board.rows)
        self.spaces = max(len(row.spaces) for row in self.board.rows)
        self.track = max(abs(self.board.track.low), abs(self.board.track.high))
        t, r = self.tiles, self.rows
        self.pairs = t * (t - 1) // 2
        # "action": pass, then per card kind its targets (rows, tiles) or none.
        self.action_targets = {
            card: r if card in _ROW_TARGETED else t if card in _TILE_TARGETED else 1 for card in ActionCard
        }
        sizes = {
            "tile": t,
            "tiles": self.pairs,
            "row": r,
            "pile": len(LuckCard),
            "luck": 2 + t + self.pairs,
            "action": 1 + sum(self.action_targets.values()),
        }
        self.segments: dict[str, int] = {}
        start = 0
        for name in SEGMENTS:
            self.segments[name] = start
            start += sizes[name]
        self.action_size = start
        self.action_starts = {}
        at = 1
        for card in ActionCard:
            self.action_starts[card] = at
            at += self.action_targets[card]
        super().__init__(variant)

    def layout(self) -> Sequence[Part]:
        t, r, n = self.tiles, self.rows, self.config.players
        return (
            Part("screen", t, 1, "1 for each tile behind this seat's screen"),
            Part("rows", r * self.spaces, 1, "row by row, space by space: the tile / tiles (0: empty)"),
            Part("stops", r, 1, "1 for each row with a stop sign"),
            Part("revealed_mine", t, 1, "this round's face-up tiles of this seat"),
            Part("revealed_others", t, 1, "this round's face-up tiles of the other seats"),
            Part("boxed", t, 1, "tiles left in the box"),
            Part("scores", n, 1, "scores / the track's largest absolute value, own seat first", low=-1),
            Part("screen_sizes", n, 1, "tiles behind each screen / 24 (at most 1), own seat first"),
            Part(
                "luck", 2 * n, 1, "each seat's luck cards (5 Plus Points, Positive Oxen) / 99, own seat first"
            ),
            Part("action_hands", n, 1, "action cards each seat holds / 10 (at most 1), own seat first"),
            Part(
                "action_cards", len(ActionCard), 1, "this seat's action cards of each kind / 10 (at most 1)"
            ),
            Part("discard", len(ActionCard), 1, "played action cards of each kind / 99"),
            Part("attaching", t + r + 1, 1, "during luck or action: the tile, its row, its space / spaces"),
            Part("opening", t + r, 1, "during a row choice: the tile that opens it and the taken row"),
            Part(
                "counts", 6, 1, "round / round_limit, attached, supply, luck piles (2), action pile; scaled"
            ),
            Part("play_count", 1, 1, "tiles each seat plays this round / 2"),
            Part("draws", 1, 1, "luck cards still to take / 10"),
            Part("phase", len(PHASES), 1, "one-hot: " + ", ".join(PHASES)),
            Part("decision", len(_KINDS), 1, "one-hot: the kind of this seat's pending decision"),
        )

    def fill(self, view: BrettspielView, out: dict[str, np.ndarray]) -> None:
        t, seat = self.tiles, view.seat
        out["screen"][[x - 1 for x in view.screen]] = 1
        for r, row in enumerate(view.rows):
            out["rows"][r * self.spaces : r * self.spaces + len(row)] = np.asarray(row, dtype=np.float32) / t
        out["stops"][list(view.stops)] = 1
        for tile, owner in view.revealed:
            out["revealed_mine" if owner == seat else "revealed_others"][tile - 1] = 1
        out["boxed"][[x - 1 for x in view.boxed]] = 1
        out["scores"][:] = np.asarray(rotated(view.scores, seat), dtype=np.float32) / self.track
        # Drawn tiles and action cards may pass the usual counts: the parts are clipped to their bound.
        out["screen_sizes"][:] = np.minimum(
            np.asarray(rotated(view.screen_sizes, seat), dtype=np.float32) / 24, 1
        )
        luck = [count for hand in rotated(view.luck, seat) for count in hand]
        out["luck"][:] = np.asarray(luck, dtype=np.float32) / 99
        if view.hand_sizes:
            out["action_hands"][:] = np.minimum(
                np.asarray(rotated(view.hand_sizes, seat), dtype=np.float32) / 10, 1
            )
        held = np.bincount(np.asarray(view.action_cards, dtype=int) - 1, minlength=len(ActionCard))
        out["action_cards"][:] = np.minimum(held / 10, 1)
        for card in view.discard:
            out["discard"][card - 1] += 1 / 99
        if view.attaching is not None:
            tile, at_row, space = view.attaching
            out["attaching"][[tile - 1, t + at_row]] = 1
            out["attaching"][t + self.rows] = space / self.spaces
        if view.opening is not None:
            tile, taken = view.opening
            out["opening"][[tile - 1, t + taken]] = 1
        counts = (
            view.round / self.config.round_limit,
            view.attached / (2 * self.config.players),
            view.supply_size / t,
            view.piles[0] / 99,
            view.piles[1] / 99,
            view.action_pile_size / (99 * len(ActionCard)),
        )
        out["counts"][:] = np.minimum(counts, 1)
        out["play_count"][0] = view.play_count / 2
        out["draws"][0] = min(view.draws / 10, 1)
        out["phase"][PHASES.index(view.phase)] = 1
        if view.decision is not None:
            out["decision"][_KINDS.index(view.decision.kind)] = 1

    def pair(self, a: int, b: int) -> int:
        """The number of the tile pair ``a < b`` (tiles from 1)."""
        t = self.tiles
        i, j = a - 1, b - 1
        return i * (2 * t - i - 1) // 2 + (j - i - 1)

    def index(self, decision: Decision, option: Action, position: int) -> int:
        segment = _KIND_SEGMENT[decision.kind]
        start = self.segments[segment]
        if segment in ("tile", "pile"):
            assert isinstance(option, int)
            return start + option - 1
        if segment == "row":
            assert isinstance(option, int)
            return start + option
        assert isinstance(option, tuple)
        if segment == "tiles":
            if len(option) != 2:
                raise ValueError(f"the board env encodes two tiles played at once, not {len(option)}")
            return start + self.pair(*option)
        if segment == "luck":
            if not option:
                return start
            if option[0] == LuckCard.PLUS_POINTS:
                return start + 1
            targets = option[1:]
            if len(targets) == 1:
                return start + 2 + targets[0] - 1
            return start + 2 + self.tiles + self.pair(*targets)
        if not option:
            return start
        card = ActionCard(option[0])
        base = start + self.action_starts[card]
        if card in _ROW_TARGETED:
            return base + option[1]
        if card in _TILE_TARGETED:
            return base + option[1] - 1
        return base

    def scores(self, state: BrettspielState) -> tuple[int, ...]:
        return tuple(state.scores)


def board_encoding(config: BrettspielConfig | dict[str, Any] | None = None) -> BoardEncoding:
    """The encoding of a board game with ``config`` (a config, a mapping of options, or the default)."""
    if isinstance(config, dict):
        config = config_from_mapping(BrettspielConfig, config)
    return BoardEncoding(Brettspiel(config))


def env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The board game's AEC environment; ``options`` are the engine's (``pro=True, luck=True`` …)."""
    return GameEnv(board_encoding(options), render_mode=render_mode)
