"""Reference bot strength: bull heads per hand against three random bots, and the MC bot's speed.

Each figure is the bot in one seat against three ``random`` bots over 2000 four-player single
hands (200 with ``--quick``); the same seeds for every bot, so the figures compare directly.
``bot.mc.ms_per_decision`` is the mean wall time of the Monte Carlo bot's ``decide`` in a
process of its own (the hands are split over two processes, one per core).
``bot.mc.vs_heuristic`` is the MC bot's mean bull heads per hand at a table of two MC and two
heuristic bots (1000 hands, 100 with ``--quick``; the seats of classic are symmetric, so two
fixed seats each are as good as rotating them); ``bot.heuristic.vs_mc`` the heuristic bots'
at the same table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arena.evaluate import bulls_per_hand, match_seed
from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from referee.rules.registry import make_variant


def mc_against_heuristic(hands: int, seed: int = 0) -> tuple[float, float]:
    """Mean bull heads per hand of the two MC seats and of the two heuristic seats, same hands."""
    variant = make_variant("classic", {"players": 4, "hands": 1, "target": None})
    mc, heuristic = reference_bot("classic", "mc"), reference_bot("classic", "heuristic")
    mine = theirs = 0
    for hand in range(hands):
        scores = play_match(variant, [mc, mc, heuristic, heuristic], match_seed(seed, hand)).outcome.scores
        mine += scores[0] + scores[1]
        theirs += scores[2] + scores[3]
    return mine / (2 * hands), theirs / (2 * hands)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    hands = 200 if quick else 2000
    for bot in ("random", "heuristic", "mc"):
        result = bulls_per_hand(bot, hands=hands, seed=0, players=4, processes=2)
        yield {"name": f"bot.{bot}.bulls_per_hand", "value": round(result.mean, 3), "unit": "bull heads/hand"}
        if bot == "mc":
            yield {"name": "bot.mc.ms_per_decision", "value": round(result.ms_per_decision, 3), "unit": "ms"}
    mc, heuristic = mc_against_heuristic(100 if quick else 1000)
    yield {"name": "bot.mc.vs_heuristic", "value": round(mc, 3), "unit": "bull heads/hand"}
    yield {"name": "bot.heuristic.vs_mc", "value": round(heuristic, 3), "unit": "bull heads/hand"}
