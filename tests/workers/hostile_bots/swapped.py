"""Hostile: the code swapped into the store in place of an honest bot's archive (same sha256 row).

Were it run, it would write ``__OUTSIDE__/ran-__TOKEN__`` (the test runs the block unconfined, so
nothing but the platform's check of the stored code can stop it).
"""

from __future__ import annotations

from pathlib import Path

from bot_sdk import ClassicBot

Path("__OUTSIDE__/ran-__TOKEN__").write_text("the swapped code ran")


class Swapped(ClassicBot):
    """Plays the lowest card (its harm is done on import)."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        return min(view.hand)
