"""Reference bot strength: bull heads per hand against three random bots, and the MC bot's speed.

Each figure is the bot in one seat against three ``random`` bots over 2000 four-player single
hands (200 with ``--quick``); the same seeds for every bot, so the figures compare directly.
``bot.mc.ms_per_decision`` is the mean wall time of the Monte Carlo bot's ``decide`` in a
process of its own (the hands are split over two processes, one per core).
``bot.mc.vs_heuristic`` is the MC bot's mean bull heads per hand at a table of two MC and two
heuristic bots (1000 hands, 100 with ``--quick``; the seats of classic are symmetric, so two
fixed seats each are as good as rotating them); ``bot.heuristic.vs_mc`` the heuristic bots'
at the same table. ``bot.mc.cpu_ms_per_decision.native`` and ``.numpy`` time the MC bot's
decisions on its C playouts and on the numpy batch in one run (``bot.mc.native_speedup``).
"""

from __future__ import annotations

import time
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


def native_against_numpy(hands: int, rounds: int) -> tuple[float, float]:
    """CPU ms per decision of the MC bot on its C playouts and on the numpy batch: the same
    hands (seat 0 MC, three random bots) played with each, rounds interleaved. The two play the
    same games (tests/test_bots_classic.py), so each decision is timed twice on the same view."""
    from games.classic.montecarlo import MonteCarloBot
    from games.classic.sim import playouts as batch

    if not batch.NATIVE:
        raise RuntimeError("the C playouts are not built (games/classic/sim/_native.c): pip install -e .")
    spent = {"native": [0.0, 0], "numpy": [0.0, 0]}
    mode = "native"

    class Timed(MonteCarloBot):
        def decide(self, view: Any) -> Any:
            start = time.process_time()
            try:
                return super().decide(view)
            finally:
                spent[mode][0] += time.process_time() - start
                spent[mode][1] += 1

    variant = make_variant("classic", {"players": 4, "hands": 1, "target": None})
    rand = reference_bot("classic", "random")
    compiled = batch.playouts
    try:
        for _ in range(rounds):
            for mode in ("native", "numpy"):
                batch.playouts = compiled if mode == "native" else batch.playouts_numpy
                for hand in range(hands):
                    play_match(variant, [Timed, rand, rand, rand], match_seed(1, hand))
    finally:
        batch.playouts = compiled
    native, numpy = (1000 * spent[m][0] / spent[m][1] for m in ("native", "numpy"))
    return native, numpy


def run(quick: bool) -> Iterator[dict[str, Any]]:
    native, numpy = native_against_numpy(20 if quick else 100, 1 if quick else 3)
    yield {"name": "bot.mc.cpu_ms_per_decision.native", "value": round(native, 3), "unit": "ms"}
    yield {"name": "bot.mc.cpu_ms_per_decision.numpy", "value": round(numpy, 3), "unit": "ms"}
    yield {"name": "bot.mc.native_speedup", "value": round(numpy / native, 2), "unit": "ratio"}
    hands = 200 if quick else 2000
    for bot in ("random", "heuristic", "mc"):
        result = bulls_per_hand(bot, hands=hands, seed=0, players=4, processes=2)
        yield {"name": f"bot.{bot}.bulls_per_hand", "value": round(result.mean, 3), "unit": "bull heads/hand"}
        if bot == "mc":
            yield {"name": "bot.mc.ms_per_decision", "value": round(result.ms_per_decision, 3), "unit": "ms"}
    mc, heuristic = mc_against_heuristic(100 if quick else 1000)
    yield {"name": "bot.mc.vs_heuristic", "value": round(mc, 3), "unit": "bull heads/hand"}
    yield {"name": "bot.heuristic.vs_mc", "value": round(heuristic, 3), "unit": "bull heads/hand"}
