"""Hostile: holds memory where ``RLIMIT_AS`` does not look (issue 29: 3 GB through a memfd).

``python memfd.py MB [STEP…]`` tries, in turn (or only the STEPs named: memfd, shm, anonymous),
to hold MB megabytes in a memfd (written, then unmapped), in files on ``/dev/shm`` (tmpfs), and
in anonymous memory it touches page by page; it prints one
JSON line per step, as it goes (``{"step": …, "held_mb": …, "stopped": reason}``), so that a bot
killed on the way has said how far it got.
"""

from __future__ import annotations

import errno
import json
import os
import sys

MB = 1 << 20


def say(step: str, held: int, stopped: str) -> None:
    print(json.dumps({"step": step, "held_mb": held, "stopped": stopped}), flush=True)


def fill(fd: int, total: int) -> tuple[int, str]:
    chunk = b"\1" * MB
    for held in range(total):
        try:
            os.write(fd, chunk)
        except OSError as exc:
            return held, errno.errorcode.get(exc.errno or 0, str(exc.errno))
        if held % 64 == 0:
            print(json.dumps({"holding_mb": held}), flush=True)
    return total, "held"


def main(total: int, steps: set[str]) -> None:
    if "memfd" in steps:
        memfd(total)
    if "shm" in steps:
        fd = os.open("/dev/shm/hostile", os.O_CREAT | os.O_WRONLY, 0o600)
        say("/dev/shm", *fill(fd, total))
    if "anonymous" in steps:
        anonymous(total)


def memfd(total: int) -> None:
    try:
        fd = os.memfd_create("hostile")
    except OSError as exc:
        say("memfd", 0, errno.errorcode.get(exc.errno or 0, str(exc.errno)))
    else:
        say("memfd", *fill(fd, total))  # the fd stays open: its pages stay held


def anonymous(total: int) -> None:
    pages: list[bytearray] = []
    try:
        while len(pages) < total:
            block = bytearray(MB)
            block[::4096] = b"\1" * (MB // 4096)  # touch every page
            pages.append(block)
        stopped = "held"
    except MemoryError:
        stopped = "MemoryError"
    say("anonymous", len(pages), stopped)


if __name__ == "__main__":
    main(int(sys.argv[1]), set(sys.argv[2:]) or {"memfd", "shm", "anonymous"})
