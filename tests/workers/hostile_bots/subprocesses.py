"""Hostile: runs a shell, and leaves a detached daemon behind that should outlive the bot."""

from __future__ import annotations

import os
import subprocess

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
_done = False


def attack() -> tuple[bool, str]:
    shell = subprocess.run(
        ["/bin/sh", "-c", "id -u; ls / | tr '\\n' ' '"], capture_output=True, text=True, timeout=10
    )
    # A daemon: new session, double fork, SIGTERM and SIGHUP ignored, named after the run.
    daemon = subprocess.Popen(
        [
            "/bin/sh",
            "-c",
            f"trap '' TERM HUP; exec python3 -c 'import time; time.sleep(3600)' {TOKEN} || sleep 3600",
        ],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return (
        False,
        f"shell said {shell.stdout.strip()!r}; daemon {daemon.pid} started, uid {os.getuid()}",
    )


class Subprocesses(ClassicBot):
    """Attacks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile subprocesses: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)
