"""Brettspiel reference bots: mean points per game against three random opponents.

Each reference bot plays the same seeded four-player games of each version (the basic game,
with luck cards, the pro version, the pro version with luck cards), taking every seat in turn;
the other seats are RandomBot. The random bot's own figure is the baseline the others must beat.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

from bot_sdk.bots import REFERENCE_BOTS, reference_bot
from bot_sdk.play import play_match
from referee.rules import make_variant

PLAYERS = 4
MODES = {
    "basic": {"luck": False},
    "luck": {"luck": True},
    "pro": {"pro": True},
    "pro-luck": {"pro": True, "luck": True},
}


def mean_points(bot: str, mode: str, games: int) -> float:
    """The bot's mean points per game over ``games`` seeded games, seats rotating."""
    game = make_variant("board", {"players": PLAYERS, **MODES[mode]})
    me = reference_bot("board", bot)
    opponent = reference_bot("board", "random")
    points = []
    for number in range(games):
        seat = number % PLAYERS
        seats = [opponent] * PLAYERS
        seats[seat] = me
        result = play_match(game, seats, seed=20_000 + number)
        points.append(result.outcome.scores[seat])
    return statistics.fmean(points)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    games = 24 if quick else 800
    for mode in MODES:
        for bot in REFERENCE_BOTS["board"]:
            value = mean_points(bot, mode, games)
            yield {"name": f"bot.board.{mode}.{bot}.points", "value": round(value, 2), "unit": "points/game"}
