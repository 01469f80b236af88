"""Hostile: looks for the admin token and the store's URL in its environment and in every process's."""

from __future__ import annotations

import os
import sys

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
SECRETS = (f"admin-{TOKEN}", f"hunter2-{TOKEN}")
"""What the test puts in the worker's SIXNIMMT_ADMIN_TOKEN and SIXNIMMT_DATABASE_URL."""
_done = False


def attack() -> tuple[bool, str]:
    found, looked = [], 0
    sources = {"environ": "\0".join(f"{k}={v}" for k, v in os.environ.items())}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for name in ("environ", "cmdline"):
                looked += 1
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as f:
                        sources[f"/proc/{pid}/{name}"] = f.read().decode(errors="replace")
                except OSError:
                    pass
    names = [
        k for k in os.environ if k.startswith("SIXNIMMT_") and k not in ("SIXNIMMT_REFEREE", "SIXNIMMT_TOKEN")
    ]
    for where, text in sources.items():
        found += [f"{where}: {s[:12]}…" for s in SECRETS if s in text]
    if found or names:
        return True, f"found {found} {names}"
    return False, f"no secret in its environment or {looked} /proc files; its variables: {sorted(os.environ)}"


class Secrets(ClassicBot):
    """Attacks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile secrets: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)


if __name__ == "__main__" and sys.argv[1:] == ["attack"]:
    print(attack())
