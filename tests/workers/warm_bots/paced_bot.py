"""Plays the lowest card after thinking a fixed 15 ms: its games take as long on any machine.

For the tests whose blocks must last a while whatever the machine's speed: the sets of blocks
that outlast a lease (tests/workers/test_blocks_at_once.py), and the chaos scenario whose league
must not be over before a host's link comes back (tests/chaos, ``link_cut``).
"""

from __future__ import annotations

import time

from bot_sdk import ClassicBot, ClassicView

THINK_S = 0.015
"""The time each card decision takes (well inside the referee's decision deadline)."""


class PacedBot(ClassicBot):
    def choose_card(self, view: ClassicView) -> int:
        time.sleep(THINK_S)
        return min(view.hand)
