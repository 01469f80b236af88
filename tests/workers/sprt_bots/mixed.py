"""Classic bots for the SPRT tests: the heuristic bot diluted with random cards."""

from __future__ import annotations

import random

from games.classic.bots import HeuristicBot
from games.classic.rules.classic import ClassicView


class Mixed(HeuristicBot):
    """Plays a random card half of the time, else the heuristic's: clearly weaker than the heuristic."""

    random_share = 0.5

    def choose_card(self, view: ClassicView) -> int:
        if self.rng.random() < self.random_share:
            return self.rng.choice(view.hand)
        return super().choose_card(view)


class MixedElsewhere(Mixed):
    """The same strategy as :class:`Mixed` with randomness of its own: no better, no worse, other games."""

    def on_start(self, seat: int, variant: str, config: dict[str, object]) -> None:
        self.rng = random.Random(self.rng.getrandbits(64) ^ 0x5EED)
