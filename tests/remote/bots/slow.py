"""A remote bot that takes 0.25 s per decision, so that its games last long enough to cut."""

import time

from bot_sdk import ClassicBot, ClassicView


class SlowBot(ClassicBot):
    def choose_card(self, view: ClassicView) -> int:
        time.sleep(0.25)
        return min(view.hand)
