"""Hostile: reads the other bots' directories and the block root, the store, a file outside; writes."""

from __future__ import annotations

import os
import stat
import sys

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
OUTSIDE = "__OUTSIDE__"
_done = False


def _granted() -> list[str]:
    """What the sandbox lends every bot read-only on purpose: the interpreter and its packages.

    A checkout under /tmp puts the venv there too; reading it is no attack.
    """
    import bot_sdk
    import referee
    import sixnimmt

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr"}
    roots |= {os.path.abspath(next(iter(m.__path__))) for m in (bot_sdk, referee, sixnimmt)}
    return sorted(os.path.realpath(r) + os.sep for r in roots)


def attack() -> tuple[bool, str]:
    mine = os.path.dirname(os.path.abspath(__file__))
    granted = _granted()
    block = os.path.dirname(mine)
    read, wrote = [], []
    named = [os.path.join(OUTSIDE, "canary.txt"), os.path.join(OUTSIDE, "store.db")]
    found: list[str] = []
    for top in (block, os.path.dirname(block), "/tmp", OUTSIDE):
        for directory, _, names in os.walk(top):
            if directory == mine or directory.startswith(mine + os.sep):
                continue
            found += [os.path.join(directory, n) for n in names]
            if len(found) > 50_000:  # unconfined, the host's /tmp can be big
                break
    candidates = named + sorted(set(found) - set(named))[:5000]
    for path in candidates:
        if path.startswith(mine + os.sep) or os.path.realpath(path).startswith(tuple(granted)):
            continue
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue  # a pipe would block the read
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.read(fd, 64)
            os.close(fd)
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
