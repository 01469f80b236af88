"""Plays the lowest card, and dies at its first decision of a ninth game in the same process.

A block of four seats rotates four games, each on a process of its own (a lane: no process plays
two seats of one deal), and ``bot check`` plays eight, so a fresh process never gets there; a warm
lane's process, one game a block, dies in its ninth block (the memory of a process carries over
between blocks, its games' objects do not).
"""

from __future__ import annotations

import os
from typing import Any

from bot_sdk import ClassicBot, ClassicView

STARTS = 0


class ThirdBlockCrash(ClassicBot):
    def on_start(self, seat: int, variant: str, config: dict[str, Any]) -> None:
        global STARTS
        STARTS += 1
        self.number = STARTS

    def choose_card(self, view: ClassicView) -> int:
        if self.number > 8:
            os._exit(9)
        return min(view.hand)
