"""The 25th-anniversary variant as an RL environment: number cards, special cards, swaps, two rounds.

Actions, in segments (``T`` the top card, ``R`` the most rows a table can hold):

- ``card``: play number card ``c`` (``c - 1``); ``row``: a low card takes row ``r``;
- ``special``: pass; swap a special card of kind ``k`` after a take; "5th Row"; "7 nimmt!";
  "Insert" into row ``r``; "Replace" with hand card ``c``; "Shift" table card ``c`` into row ``r``;
  "Negative = Positive" on card ``c``; "Block" row ``r``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.core import Encoding, GameEnv, Part, rotated
from games.anniversary.rules.anniversary import Anniversary, AnniversaryConfig
from games.anniversary.rules.anniversary_cards import SWAP, Special
from games.anniversary.rules.anniversary_view import AnniversaryView
from referee.rules.cards import bull_table
from referee.rules.config import config_from_mapping
from referee.rules.core import Action, Decision, DecisionKind

PHASES = ("play", "special", "row", "take", "draw")
"""The phases in which a seat decides (the view's ``phase``), one-hot in the observation."""
_KINDS = len(Special)
_ROW_TARGET = (Special.INSERT, Special.BLOCK)
_CARD_TARGET = (Special.REPLACE, Special.NEGATIVE_POSITIVE)


class AnniversaryEncoding(Encoding):
    """An anniversary seat's view as a vector; number cards, rows and special cards as one action space."""

    def __init__(self, variant: Anniversary) -> None:
        cfg = variant.config
        self.config: AnniversaryConfig = cfg
        self.top = cfg.deck
        self.bulls = bull_table(self.top)
        self.max_rows = max(cfg.rows, cfg.max_rows)
        self.slots = cfg.row_capacity + 1  # a "7 nimmt!" row holds one card more
        t, r = self.top, self.max_rows
        sizes = {Special.FIFTH_ROW: 1, Special.SEVEN_NIMMT: 1, Special.SHIFT: t * r}
        sizes.update({k: r for k in _ROW_TARGET})
        sizes.update({k: t for k in _CARD_TARGET})
        self.special_start = t + r
        self.kind_starts: dict[int, int] = {}
        at = self.special_start + 1 + _KINDS  # pass, then a swap per kind
        for kind in Special:
            self.kind_starts[kind] = at
            at += sizes[kind]
        self.action_size = at
        super().__init__(variant)

    def layout(self) -> Sequence[Part]:
        t, r, n = self.top, self.max_rows, self.config.players
        return (
            Part("hand", t, 1, "1 at card - 1 for each number card in this seat's hand"),
            Part("specials", _KINDS, 1, "this seat's special cards of each kind / 10 (at most 1)"),
            Part("rows", r * self.slots, 1, "row by row, each row's cards / top card, 0 past its end"),
            Part("row_heads", r, 1, "each row's bull heads / (slots * 7)"),
            Part("blocked", r, 1, "1 for each blocked row"),
            Part("sevens", r, 1, "1 for each row holding a 7 nimmt! card"),
            Part("taken", t, 1, "1 for every card some seat took this round"),
            Part("set_aside", t, 1, "cards Negative = Positive set aside this round"),
            Part("revealed_mine", t, 1, "this seat's face-up number card of the turn"),
            Part("revealed_others", t, 1, "the other seats' face-up number cards of the turn"),
            Part("placing", t + 1, 1, "the card being placed now, and 1 if it is this seat's"),
            Part("taken_now", t, 1, "in the take phase: the cards just taken"),
            Part("special_counts", n, 1, "special cards each seat holds / 10 (at most 1), own seat first"),
            Part("played", n, 1, "special cards each seat played this turn / 10 (at most 1), own first"),
            Part("discard", _KINDS, 1, "face-up discarded special cards of each kind / 99"),
            Part("scores", n, 10, "scores / 66, own seat first", low=-10),
            Part("counts", 3, 1, "round / rounds, turn / hand size, special deck / 99 (at most 1)"),
            Part("phase", len(PHASES), 1, "one-hot: " + ", ".join(PHASES)),
        )

    def fill(self, view: AnniversaryView, out: dict[str, np.ndarray]) -> None:
        cfg, top, seat = self.config, self.top, view.seat
        out["hand"][[c - 1 for c in view.hand]] = 1
        out["specials"][:] = np.minimum(
            np.bincount(np.asarray(view.specials, dtype=int) - 1, minlength=_KINDS) / 10, 1
        )
        for r, row in enumerate(view.rows):
            out["rows"][r * self.slots : r * self.slots + len(row)] = np.asarray(row, dtype=np.float32) / top
            out["row_heads"][r] = sum(self.bulls[c] for c in row) / (self.slots * 7)
        out["blocked"][: len(view.blocked)] = view.blocked
        out["sevens"][: len(view.sevens)] = view.sevens
        out["taken"][[c - 1 for pile in view.piles for c in pile]] = 1
        out["set_aside"][[c - 1 for c in view.set_aside]] = 1
        for card, owner in view.revealed:
            out["revealed_mine" if owner == seat else "revealed_others"][card - 1] = 1
        if view.placing is not None:
            card, owner = view.placing
            out["placing"][card - 1] = 1
            out["placing"][top] = float(owner == seat)
        out["taken_now"][[c - 1 for c in view.taken]] = 1
        out["special_counts"][:] = np.minimum(np.asarray(rotated(view.special_counts, seat)) / 10, 1)
        if view.played:
            out["played"][:] = np.minimum(np.asarray(rotated(view.played, seat)) / 10, 1)
        discard = np.bincount(np.asarray(view.discard, dtype=int) - 1, minlength=_KINDS)
        out["discard"][:] = np.minimum(discard / 99, 1)
        out["scores"][:] = np.clip(np.asarray(rotated(view.scores, seat)) / 66, -10, 10)
        counts = (view.round_no / cfg.rounds, view.turn / cfg.hand_size, view.deck_size / 99)
        out["counts"][:] = np.minimum(counts, 1)
        if view.phase in PHASES:
            out["phase"][PHASES.index(view.phase)] = 1

    def index(self, decision: Decision, option: Action, position: int) -> int:
        if decision.kind is DecisionKind.CARD:
            assert isinstance(option, int)
            return option - 1
        if decision.kind is DecisionKind.ROW:
            assert isinstance(option, int)
            return self.top + option
        assert isinstance(option, tuple)
        if not option:
            return self.special_start
        code, *targets = option
        if code == SWAP:
            return self.special_start + targets[0]
        kind = Special(code)
        start = self.kind_starts[kind]
        if kind in _ROW_TARGET:
            return start + targets[0]
        if kind in _CARD_TARGET:
            return start + targets[0] - 1
        if kind is Special.SHIFT:
            card, row = targets
            return start + (card - 1) * self.max_rows + row
        return start


def anniversary_encoding(config: AnniversaryConfig | dict[str, Any] | None = None) -> AnniversaryEncoding:
    """The encoding of an anniversary game with ``config`` (a config, a mapping of options, or none)."""
    if isinstance(config, dict):
        config = config_from_mapping(AnniversaryConfig, config)
    return AnniversaryEncoding(Anniversary(config))


def env(render_mode: str | None = None, **options: Any) -> GameEnv:
    """The anniversary variant's AEC environment; ``options`` are the engine's."""
    return GameEnv(anniversary_encoding(options), render_mode=render_mode)
