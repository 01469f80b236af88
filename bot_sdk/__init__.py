"""What a bot author imports: bot base classes, typed views, the local arena and the reference bots."""

from bot_sdk.bot import Bot, ClassicBot
from referee.rules.classic import ClassicView
from referee.rules.core import Action, Decision, DecisionKind

__all__ = ["Action", "Bot", "ClassicBot", "ClassicView", "Decision", "DecisionKind"]
