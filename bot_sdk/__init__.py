"""What a bot author imports: bot base classes, typed views, the local arena and the reference bots."""

from typing import Any

from bot_sdk.bot import Bot
from games.classic.rules.classic import ClassicView
from referee.rules.core import Action, Decision, DecisionKind

__all__ = ["Action", "Bot", "ClassicBot", "ClassicView", "Decision", "DecisionKind"]


def __getattr__(name: str) -> Any:
    """``ClassicBot``, the classic game's base (``games.classic.sdk``), where authors have always
    found it; imported on first use, since that module imports ``bot_sdk.bot``."""
    if name == "ClassicBot":
        from games.classic.sdk import ClassicBot

        return ClassicBot
    raise AttributeError(f"module 'bot_sdk' has no attribute {name!r}")
