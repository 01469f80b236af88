"""Hostile: reads the other bots' directories and the block root, the store, a file outside; writes."""

from __future__ import annotations

import os
import sys

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
OUTSIDE = "__OUTSIDE__"
_done = False


def attack() -> tuple[bool, str]:
    mine = os.path.dirname(os.path.abspath(__file__))
    block = os.path.dirname(mine)
    read, wrote = [], []
    candidates = [os.path.join(OUTSIDE, "canary.txt"), os.path.join(OUTSIDE, "store.db")]
    for top in (block, os.path.dirname(block), "/tmp", OUTSIDE):
        try:
            for directory, _, names in os.walk(top):
                if directory == mine or directory.startswith(mine + os.sep):
                    continue
                candidates += [os.path.join(directory, n) for n in names]
        except OSError:
            pass
    for path in sorted(set(candidates)):
        if path.startswith(mine + os.sep):
            continue
        try:
            with open(path, "rb") as f:
                f.read(64)
            read.append(path)
        except OSError:
            pass
    for target in (
        os.path.join(OUTSIDE, f"pwned-{TOKEN}"),
        os.path.join(block, f"pwned-{TOKEN}"),
        os.path.join(mine, f"pwned-{TOKEN}"),
    ):
        try:
            with open(target, "w") as f:
                f.write("pwned")
            wrote.append(target)
        except OSError:
            pass
    if read or wrote:
        return True, f"read {read[:5]} ({len(read)} files), wrote {wrote}"
    return False, f"no file outside its own directory readable, nothing writable ({len(candidates)} tried)"


class Rivals(ClassicBot):
    """Attacks once, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile rivals: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)


if __name__ == "__main__" and sys.argv[1:] == ["attack"]:
    print(attack())
