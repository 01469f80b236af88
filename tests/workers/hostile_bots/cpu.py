"""Hostile: spins forever at its first decision (and so takes a core from everyone else)."""

from __future__ import annotations

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"


class Cpu(ClassicBot):
    """Never returns: the CPU time limit kills it."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        n = 0
        while True:
            n += 1
