"""A remote bot whose first card decision of each game raises: one ``exception`` fault a game."""

from bot_sdk import ClassicBot, ClassicView


class FumblingBot(ClassicBot):
    def choose_card(self, view: ClassicView) -> int:
        if view.turn == 0:
            raise RuntimeError("fumbled the first card")
        return min(view.hand)
