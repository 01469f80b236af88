"""A classic bot whose policy was learned in the RL environment (``train.py`` beside this file).

The policy is a linear softmax over the legal actions: each action's features are read from the
environment's observation vector (``envs.classic``: the seat's view, nothing more), its score is
the features times learned weights. The bot computes the same observation from the view the SDK
hands it, so it plays under the referee exactly as it played in training. The weights are
``policy.json`` beside this file.

    sixnimmt bot play examples/rl_classic/policy_bot.py --against random,random,random --games 50
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bot_sdk import ClassicBot, ClassicView
from envs.classic import ClassicEncoding, classic_encoding

WEIGHTS = Path(__file__).with_name("policy.json")

CARD_FEATURES = (
    "low",  # the card is below every row: its owner takes a row
    "low_heads",  # ... and the cheapest row's bull heads (/10)
    "takes",  # the card is its row's sixth: the row's bull heads (/10)
    "crowded",  # as many unseen cards fit before it as its row has room: the row's heads (/10)
    "between",  # unseen cards between the row's end and the card (/10)
    "room",  # free places in its row (/capacity)
    "height",  # the card / top card
)
ROW_FEATURES = ("heads", "length")  # a row a low card takes: its bull heads (/10), its length


class LinearPolicy:
    """Scores each legal action of a classic observation; softmax (training) or argmax (play)."""

    def __init__(
        self, encoding: ClassicEncoding, card: np.ndarray | None = None, row: np.ndarray | None = None
    ):
        self.encoding = encoding
        self.card = np.zeros(len(CARD_FEATURES)) if card is None else np.asarray(card, dtype=float)
        self.row = np.zeros(len(ROW_FEATURES)) if row is None else np.asarray(row, dtype=float)

    def features(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """The legal action indices, their feature rows, and whether the decision is a row's."""
        enc = self.encoding
        cfg, top, part = enc.config, enc.top, enc.offsets
        legal = np.flatnonzero(mask)
        cards = np.rint(observation[part["rows"]] * top).reshape(cfg.rows, cfg.row_capacity)
        lengths = (cards > 0).sum(axis=1)
        ends = cards.max(axis=1)
        heads = observation[part["row_heads"]] * cfg.row_capacity * 7
        if legal[0] >= top:  # a low card's row
            rows = legal - top
            return legal, np.stack([heads[rows] / 10, lengths[rows] / cfg.row_capacity], axis=1), True
        seen = observation[part["hand"]] + observation[part["taken"]]
        seen = seen + observation[part["revealed_mine"]] + observation[part["revealed_others"]]
        seen[(cards[cards > 0] - 1).astype(int)] = 1
        unseen_before = np.concatenate([[0], np.cumsum(seen == 0)])  # unseen cards below each card
        rows_feats = []
        for index in legal:
            card = index + 1
            below = np.flatnonzero(ends < card)
            if below.size == 0:
                rows_feats.append((1, heads.min() / 10, 0, 0, 0, 0, card / top))
                continue
            r = below[np.argmax(ends[below])]
            room = cfg.row_capacity - lengths[r]
            between = unseen_before[card - 1] - unseen_before[int(ends[r])]
            takes = heads[r] / 10 if room == 0 else 0.0
            crowded = heads[r] / 10 if 0 < room <= between else 0.0
            rows_feats.append((0, 0, takes, crowded, between / 10, room / cfg.row_capacity, card / top))
        return legal, np.asarray(rows_feats, dtype=float), False

    def probabilities(
        self, observation: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Legal indices, their features and the softmax probabilities of the actions."""
        legal, feats, is_row = self.features(observation, mask)
        scores = feats @ (self.row if is_row else self.card)
        p = np.exp(scores - scores.max())
        return legal, feats, p / p.sum()

    def best(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The index of the highest-scoring legal action (the first on a tie)."""
        legal, feats, is_row = self.features(observation, mask)
        return int(legal[int(np.argmax(feats @ (self.row if is_row else self.card)))])

    def to_json(self) -> dict[str, Any]:
        return {
            "card": dict(zip(CARD_FEATURES, map(float, self.card), strict=True)),
            "row": dict(zip(ROW_FEATURES, map(float, self.row), strict=True)),
        }

    @classmethod
    def from_json(cls, encoding: ClassicEncoding, data: dict[str, Any]) -> LinearPolicy:
        return cls(encoding, [data["card"][f] for f in CARD_FEATURES], [data["row"][f] for f in ROW_FEATURES])

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")


def load(encoding: ClassicEncoding, path: Path = WEIGHTS) -> LinearPolicy:
    """The policy saved at ``path`` for games of ``encoding``'s config."""
    return LinearPolicy.from_json(encoding, json.loads(path.read_text()))


class PolicyBot(ClassicBot):
    """Plays the learned policy's best action from the observation of its view."""

    weights: Path = WEIGHTS

    def on_start(self, seat: int, variant: str, config: dict[str, Any]) -> None:
        self.policy = load(classic_encoding(config), self.weights)

    def _best(self, view: ClassicView) -> int:
        enc = self.policy.encoding
        index = self.policy.best(enc.observe(view), enc.mask(view.decision))
        return enc.options(view.decision)[index]  # type: ignore[arg-type, return-value]

    def choose_card(self, view: ClassicView) -> int:
        return self._best(view)

    def choose_row(self, view: ClassicView) -> int:
        return self._best(view)
