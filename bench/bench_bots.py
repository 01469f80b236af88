"""Reference bot strength: bull heads per hand against three random bots, and the MC bot's speed.

Each figure is the bot in one seat against three ``random`` bots over 2000 four-player single
hands (200 with ``--quick``); the same seeds for every bot, so the figures compare directly.
``bot.mc.ms_per_decision`` is the mean wall time of the Monte Carlo bot's ``decide`` in a
process of its own (the hands are split over two processes, one per core).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arena.evaluate import bulls_per_hand


def run(quick: bool) -> Iterator[dict[str, Any]]:
    hands = 200 if quick else 2000
    for bot in ("random", "heuristic", "mc"):
        result = bulls_per_hand(bot, hands=hands, seed=0, players=4, processes=2)
        yield {"name": f"bot.{bot}.bulls_per_hand", "value": round(result.mean, 3), "unit": "bull heads/hand"}
        if bot == "mc":
            yield {"name": "bot.mc.ms_per_decision", "value": round(result.ms_per_decision, 3), "unit": "ms"}
