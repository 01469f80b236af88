"""Hostile: forks until the kernel refuses, keeping every child alive (they sleep)."""

from __future__ import annotations

import errno
import os
import time

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
_done = False


def attack() -> tuple[bool, str]:
    forked = 0
    while forked < 100_000:
        try:
            pid = os.fork()
        except OSError as exc:
            return False, f"{forked} forks, then {errno.errorcode.get(exc.errno or 0, exc.errno)}"
        if pid == 0:
            time.sleep(3600)  # outlive the bot, if it can
            os._exit(0)
        forked += 1
    return True, f"{forked} forks and never refused"


class ForkBomb(ClassicBot):
    """Forks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile forkbomb: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)
