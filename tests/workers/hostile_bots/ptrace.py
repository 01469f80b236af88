"""Hostile: attaches with ptrace to every other process it can see, and reads PID 1's memory."""

from __future__ import annotations

import ctypes
import errno
import os

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
_done = False


def attack() -> tuple[bool, str]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    mine = {os.getpid()}
    attached, refused = [], {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine:
            continue
        pid = int(name)
        if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
            attached.append(pid)
            libc.ptrace(PTRACE_DETACH, pid, None, None)
        else:
            refused[pid] = errno.errorcode.get(ctypes.get_errno(), "?")
    try:
        with open("/proc/1/mem", "rb") as mem:
            mem.read(1)
        memory = "read /proc/1/mem"
    except OSError as exc:
        memory = f"/proc/1/mem: {errno.errorcode.get(exc.errno or 0, exc.errno)}"
    if attached or memory.startswith("read"):
        return True, f"attached to {attached}; {memory}"
    return False, f"ptrace refused for {refused}; {memory}; {len(os.listdir('/proc'))} /proc entries"


class Ptrace(ClassicBot):
    """Attacks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile ptrace: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)
