"""A memory cgroup per sandboxed bot: what ``RLIMIT_AS`` does not see is counted there too.

``RLIMIT_AS`` bounds a process's address space, but not the pages of a ``memfd`` or a tmpfs
file once unmapped, nor SysV shared memory. A memory cgroup charges every page a bot's
processes own, whatever holds it: anonymous memory, tmpfs and ``/dev/shm`` files, page cache,
kernel memory. Each bot gets its own, made under the worker's own cgroup, with a hard limit and
no swap; its processes are in it from the first one on (the launcher moves PID 1 of the bot's
namespace into it before PID 1 starts the bot: ``workers.sandbox``), and it is removed once the
bot has been waited for. Over the limit the kernel's OOM killer kills a process of the bot (SIGKILL).

- cgroup v2 (``memory.max``, ``memory.swap.max`` = 0) when the worker's cgroup has the memory
  controller and may give it to children (its ``cgroup.subtree_control`` lists ``memory``, or
  the worker can add it: a delegated cgroup, such as systemd's ``Delegate=yes``);
- cgroup v1 (``memory.limit_in_bytes``, ``memory.memsw.limit_in_bytes``) when the v1 memory
  hierarchy is mounted and the worker's cgroup in it is writable.

Elsewhere :func:`memory_cgroups` returns ``None`` with the reason, and the sandbox reports
``memory_cgroup=False`` in its :class:`~workers.sandbox.Enforcement`: only ``RLIMIT_AS`` holds
(docs/sandbox.md says what that leaves open).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import itertools
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from workers import procs

PREFIX = "sixnimmt-bot-"


@dataclass(frozen=True, slots=True)
class MemoryCgroups:
    """Where bot cgroups are made: under ``parent``, in a hierarchy of ``version`` 1 or 2."""

    version: int
    parent: Path

    def create(self, limit_bytes: int) -> BotCgroup:
        """A new cgroup for one bot, limited to ``limit_bytes`` of memory and no swap."""
        _remove_leftovers()
        path = self.parent / f"{PREFIX}{os.getpid()}-{next(_COUNTER)}"
        path.mkdir()
        try:
            if self.version == 2:
                _write(path / "memory.max", limit_bytes)
                if (path / "memory.swap.max").exists():
                    _write(path / "memory.swap.max", 0)
            else:
                _write(path / "memory.limit_in_bytes", limit_bytes)
                if (path / "memory.memsw.limit_in_bytes").exists():  # only with swap accounting
                    _write(path / "memory.memsw.limit_in_bytes", limit_bytes)
        except BaseException:
            with contextlib.suppress(OSError):
                path.rmdir()
            raise
        return BotCgroup(path, self.version)


@dataclass(frozen=True, slots=True)
class BotCgroup:
    """One bot's memory cgroup."""

    path: Path
    version: int

    def admit(self, pid: int) -> None:
        """Move process ``pid`` into it (before it starts any other: its children follow it)."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def oom_kills(self) -> int:
        """How many processes the OOM killer has killed in it for its limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = (self.path / name).read_text().splitlines()
        except OSError:
            return 0
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def remove(self, settle_s: float = 0.25) -> None:
        """Remove it once its last processes have exited (waiting up to ``settle_s`` for them);
        one still busy after that is retried at later creations and removals, and at exit."""
        deadline = time.monotonic() + settle_s
        while not _rmdir(self.path):
            if time.monotonic() > deadline:
                with _LOCK:
                    _LEFTOVER.append(self.path)
                break
            time.sleep(0.005)  # the kernel is reaping the bot's last processes
        _remove_leftovers()


_COUNTER = itertools.count()
_LOCK = threading.Lock()
_LEFTOVER: list[Path] = []


@functools.cache
def memory_cgroups() -> tuple[MemoryCgroups | None, str]:
    """Where this process can make bot cgroups, or ``None`` and why not (found once per process)."""
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError as exc:
        return None, f"no memory cgroup: cannot read the process's cgroups ({exc.strerror})"
    return discover(own, mounts)


def discover(own: list[str], mounts: list[str]) -> tuple[MemoryCgroups | None, str]:
    """:func:`memory_cgroups` from the lines of ``/proc/self/cgroup`` and ``/proc/self/mountinfo``."""
    v2_path = v1_path = None
    for line in own:
        number, controllers, path = line.split(":", 2)
        if number == "0" and controllers == "":
            v2_path = path
        elif "memory" in controllers.split(","):
            v1_path = path
    reasons = []
    if v2_path is not None:
        found, why = _v2(mounts, v2_path)
        if found is not None:
            return found, ""
        reasons.append(why)
    if v1_path is not None:
        found, why = _v1(mounts, v1_path)
        if found is not None:
            return found, ""
        reasons.append(why)
    return None, "no memory cgroup: " + ("; ".join(reasons) or "no memory controller is mounted")


def _v2(mounts: list[str], path: str) -> tuple[MemoryCgroups | None, str]:
    directory = _directory(mounts, "cgroup2", None, path)
    if directory is None:
        return None, "cgroup v2 is not mounted where this process's cgroup is"
    try:
        if "memory" not in (directory / "cgroup.controllers").read_text().split():
            return None, f"cgroup v2 gives {directory} no memory controller"
        control = directory / "cgroup.subtree_control"
        if "memory" not in control.read_text().split():
            control.write_text("+memory")
    except OSError as exc:
        return None, (
            f"cgroup v2 at {directory} cannot give its children the memory controller"
            f" ({exc.strerror}; delegate a cgroup whose processes live in a leaf below it)"
        )
    if not os.access(directory, os.W_OK):
        return None, f"cgroup v2 at {directory} is not writable"
    _sweep(directory)
    return MemoryCgroups(2, directory), ""


def _v1(mounts: list[str], path: str) -> tuple[MemoryCgroups | None, str]:
    directory = _directory(mounts, "cgroup", "memory", path)
    if directory is None:
        return None, "the cgroup v1 memory hierarchy is not mounted"
    if not os.access(directory, os.W_OK) or not (directory / "memory.limit_in_bytes").exists():
        return None, f"the cgroup v1 memory cgroup {directory} is not writable"
    _sweep(directory)
    return MemoryCgroups(1, directory), ""


def _directory(mounts: list[str], fstype: str, option: str | None, path: str) -> Path | None:
    """The directory of cgroup ``path`` in a mount of ``fstype`` (with ``option``), if mounted."""
    for line in mounts:
        fields = line.split()
        dash = fields.index("-")
        kind, options = fields[dash + 1], fields[dash + 3].split(",")
        if kind != fstype or (option is not None and option not in options):
            continue
        root, point = fields[3], fields[4]
        if not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue
        directory = Path(point) / os.path.relpath(path, root)
        if directory.is_dir():
            return Path(os.path.normpath(directory))
    return None


def _sweep(parent: Path) -> None:
    """Remove bot cgroups left by launchers that died (their pid in the name no longer runs)."""
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            owner = child.name[len(PREFIX) :].partition("-")[0]
            if child.name.startswith(PREFIX) and owner.isdigit() and not procs.alive(int(owner)):
                _rmdir(child)


@atexit.register
def _remove_leftovers() -> None:
    with _LOCK:
        left = [path for path in _LEFTOVER if not _rmdir(path)]
        _LEFTOVER[:] = left


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return False
        raise
    return True


def _write(path: Path, value: int) -> None:
    path.write_text(str(value))
