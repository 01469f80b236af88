"""Hostile: writes 40 MB to stderr at once, to fill the worker's log and memory."""

from __future__ import annotations

import os

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
MB = 40
_done = False


class Stderr(ClassicBot):
    """Floods stderr once per process, says so by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            line = (f"hostile stderr flood {TOKEN} " * 40)[:1023] + "\n"
            chunk = (line * 1024).encode()  # 1 MB
            for _ in range(MB):
                os.write(2, chunk)
            raise RuntimeError(f"hostile stderr: done: wrote {MB} MB to stderr")
        return min(view.hand)
