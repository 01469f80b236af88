"""What a bot author imports: bot base classes, typed views, the local arena and the reference bots."""

from bot_sdk.bot import Bot
from games.classic.rules.classic import ClassicView
from games.classic.sdk import ClassicBot  # the classic game's base, where authors have always found it
from referee.rules.core import Action, Decision, DecisionKind

__all__ = ["Action", "Bot", "ClassicBot", "ClassicView", "Decision", "DecisionKind"]
