"""Reference bots everyone can spar with, by variant and name.

Entries are ``"module:Class"`` strings so that listing them imports nothing heavy.
"""

from __future__ import annotations

import importlib

from bot_sdk.bot import Bot

REFERENCE_BOTS: dict[str, dict[str, str]] = {
    "classic": {
        "random": "bot_sdk.bots.classic:RandomBot",
        "lowest": "bot_sdk.bots.classic:LowestBot",
        "highest": "bot_sdk.bots.classic:HighestBot",
        "heuristic": "bot_sdk.bots.classic:HeuristicBot",
        "mc": "bot_sdk.bots.montecarlo:MonteCarloBot",
    },
    "junior-basic": {
        "random": "bot_sdk.bots.junior:RandomBasicBot",
        "heuristic": "bot_sdk.bots.junior:HeuristicBasicBot",
    },
    "junior-advanced": {
        "random": "bot_sdk.bots.junior:RandomAdvancedBot",
        "heuristic": "bot_sdk.bots.junior:HeuristicAdvancedBot",
    },
    "junior-experts": {
        "random": "bot_sdk.bots.junior:RandomExpertsBot",
        "heuristic": "bot_sdk.bots.junior:HeuristicExpertsBot",
    },
    "board": {"random": "bot_sdk.bots.board:RandomBot", "heuristic": "bot_sdk.bots.board:HeuristicBot"},
    "anniversary": {
        "random": "bot_sdk.bots.anniversary:RandomBot",
        "heuristic": "bot_sdk.bots.anniversary:HeuristicBot",
    },
}
"""variant name → bot name → ``"module:Class"``."""


def reference_bot(variant: str, name: str) -> type[Bot]:
    """The reference bot class ``name`` for ``variant``; unknown names fail with the known ones."""
    bots = REFERENCE_BOTS.get(variant)
    if bots is None:
        raise ValueError(f"no reference bots for variant {variant!r} (known: {', '.join(REFERENCE_BOTS)})")
    target = bots.get(name)
    if target is None:
        raise ValueError(f"no reference bot {name!r} for {variant} (known: {', '.join(bots)})")
    module, _, attr = target.partition(":")
    cls: type[Bot] = getattr(importlib.import_module(module), attr)
    return cls
