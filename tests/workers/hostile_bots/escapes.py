"""Hostile: terminal escape sequences in its fault reason and its stderr, to hijack the operator's
terminal (an OSC-8 link that hides where it points, a screen erase, a bidirectional override)."""

from __future__ import annotations

import os
import sys

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
ESCAPES = "\x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[2J\x1b]0;owned\x07 \u202eevil"


class Escapes(ClassicBot):
    """Prints the escapes on stderr, then raises with them; ends its process at its third hand card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        sys.stderr.write(f"hostile escapes {TOKEN} {ESCAPES}\n")
        sys.stderr.flush()
        if len(view.hand) == 8:
            os._exit(3)  # a crash: its stderr tail is shown with the exit
        raise RuntimeError(f"hostile escapes {TOKEN}: {ESCAPES}")
