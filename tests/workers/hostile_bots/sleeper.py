"""Hostile: never answers; sleeps in every decision."""

from __future__ import annotations

import time

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"


class Sleeper(ClassicBot):
    """Sleeps instead of deciding: the referee's clock and the launcher must deal with it."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        time.sleep(3600)
        return min(view.hand)
