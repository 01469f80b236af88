"""A bot that plays only when it runs confined, as a league worker's sandbox must run it.

It starts by looking around: its uid must not be root's, TCP to the store and the broker must
fail (a network namespace), the worker's secrets must not be in its environment, and no Celery
process may be visible (a PID namespace). Anything else raises on its first decision, so the
league records a fault with the reason and the image test fails, instead of a league that
played unconfined passing.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from bot_sdk import ClassicBot, ClassicView

PROBED_PORTS = (5432, 6379)


def unconfined() -> list[str]:
    """What this process can do that a sandboxed bot must not."""
    problems = []
    if os.getuid() == 0:
        problems.append("runs as root")
    for port in PROBED_PORTS:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            problems.append(f"reaches 127.0.0.1:{port}")
        except OSError:
            pass
    leaked = sorted(k for k in os.environ if k in ("SIXNIMMT_DATABASE_URL", "SIXNIMMT_BROKER_URL"))
    if leaked:
        problems.append(f"sees {', '.join(leaked)}")
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"celery" in words or b"sixnimmt worker" in words:
            problems.append(f"sees the worker's process {cmdline.parent.name}")
            break
    return problems


PROBLEMS = unconfined()


class ConfinedBot(ClassicBot):
    """Plays the lowest card, once it has found itself confined."""

    def choose_card(self, view: ClassicView) -> int:
        if PROBLEMS:
            raise RuntimeError("not sandboxed: " + "; ".join(PROBLEMS))
        return min(view.hand)
