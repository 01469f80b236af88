"""Hostile: allocates memory until refused, and fills /dev/shm (memory no rlimit counts)."""

from __future__ import annotations

import contextlib
import os

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
_done = False


def attack() -> tuple[bool, str]:
    chunks = []
    try:
        while len(chunks) < 40:  # 4 GB: far past the test's limit, short of hurting the machine
            chunk = bytearray(100 << 20)
            chunk[::4096] = b"x" * len(chunk[::4096])  # touch every page
            chunks.append(chunk)
        heap = "never refused"
    except MemoryError:
        heap = f"MemoryError after {len(chunks) * 100} MB"
    got = len(chunks) * 100
    chunks.clear()
    shm = 0
    try:
        with open(f"/dev/shm/hostile-{TOKEN}", "wb") as f:
            block = b"x" * (1 << 20)
            for _ in range(1024):  # 1 GB
                f.write(block)
                shm += 1
    except OSError as exc:
        shm_said = f"/dev/shm full at {shm} MB ({exc.strerror})"
    else:
        shm_said = f"/dev/shm took {shm} MB"
    finally:
        with contextlib.suppress(OSError):
            os.unlink(f"/dev/shm/hostile-{TOKEN}")
    return got >= 4000 or shm >= 1024, f"{heap}; {shm_said}"


class Memory(ClassicBot):
    """Attacks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile memory: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)
