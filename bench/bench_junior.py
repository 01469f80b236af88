"""Junior reference bots against random opponents: mean cards collected per game.

One bot of the kind named sits at a four-seat table with three random bots, seat rotating
with the game number; every bot kind plays the same seeds, so the figures of ``random`` and
``heuristic`` differ by the bot, not by the deals. More is better in ``basic`` and
``advanced``; fewer is better in ``advanced-nuisance`` and ``experts``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from referee.rules import make_variant

MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "basic": ("junior-basic", {}),
    "advanced": ("junior-advanced", {}),
    "advanced-nuisance": ("junior-advanced", {"nuisance": True}),
    "experts": ("junior-experts", {}),
}
PLAYERS = 4


def cards_per_game(variant_name: str, config: dict[str, Any], bot: str, games: int) -> list[int]:
    """The cards the bot collected in each of ``games`` games (seeds 0 … games-1)."""
    variant = make_variant(variant_name, {"players": PLAYERS, **config})
    mine = reference_bot(variant_name, bot)
    rand = reference_bot(variant_name, "random")
    cards = []
    for seed in range(games):
        seat = seed % PLAYERS
        factories = [mine if s == seat else rand for s in range(PLAYERS)]
        result = play_match(variant, factories, seed)
        cards.append(result.outcome.scores[seat])
    return cards


def run(quick: bool) -> Iterator[dict[str, Any]]:
    games = 80 if quick else 1000
    for mode, (variant_name, config) in MODES.items():
        for bot in ("random", "heuristic"):
            value = statistics.fmean(cards_per_game(variant_name, config, bot, games))
            yield {"name": f"bot.junior.{mode}.{bot}.score", "value": round(value, 2), "unit": "cards/game"}
