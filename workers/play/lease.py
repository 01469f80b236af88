"""A block's lease, kept while the block is played, and the sweep of what dead players left behind.

A worker that claims a block holds a lease on it (``blocks.lease_until``) and renews it every
``SIXNIMMT_LEASE_RENEW_S`` while it plays. Once a lease is over, any worker may claim the block
again, so a worker that cannot renew (the store is unreachable from it, or another claim took
the block over) must stop playing before that happens: :class:`LeaseKeeper` calls ``on_lost``
once ``SIXNIMMT_LEASE_S`` minus one renewal interval has passed without a renewal, or as soon as
a renewal finds the claim gone. The caller stops its bots and stores nothing; the block's new
player stores it. Each claim carries its fencing number (``blocks.attempts``), which every write
of the block checks, so a stale player can neither renew, fail nor store someone else's claim.

Hosts must keep their clocks in step (NTP): leases are compared with each worker's clock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import Engine

from workers import metrics, procs
from workers.store import repo

if TYPE_CHECKING:
    from arena.matches import Launcher

log = logging.getLogger(__name__)

BLOCK_DIR = "sixnimmt-block{block}-p{pid}-"
"""Prefix of a block's directory (its bots' files); the pid says which process owns it."""
BOTS_DIR = "sixnimmt-bots{block}-p{pid}-"
"""Prefix of the directory under which a block's bots get their private directories."""
_OWNED = re.compile(r"sixnimmt-(?:block|bots)\d+-p(\d+)-.*")


class LeaseLostError(RuntimeError):
    """The worker lost its lease on the block it was playing; another worker plays it."""


class LeaseKeeper:
    """Renews one claim's lease in a thread; ``on_lost()`` once it cannot be kept (see the module)."""

    def __init__(
        self,
        engine: Engine,
        block_id: int,
        claim: tuple[str, int],
        *,
        lease_s: float,
        renew_s: float,
        on_lost: Callable[[], None],
    ) -> None:
        self.engine = engine
        self.block_id = block_id
        self.claim = claim
        self.lease_s = lease_s
        self.renew_s = max(0.1, min(renew_s, lease_s / 2))
        self.on_lost = on_lost
        self.lost: str | None = None
        """Why the lease was lost, or ``None`` while it holds."""
        self._renewed = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def __enter__(self) -> LeaseKeeper:
        self._renewed = time.monotonic()
        for target, name in ((self._renew, "renew"), (self._watch, "watch")):
            threading.Thread(target=target, name=f"lease-{name}-{self.block_id}", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _renew(self) -> None:
        while not self._stop.wait(self.renew_s):
            try:
                kept = repo.renew_lease(self.engine, self.block_id, self.claim, lease_s=self.lease_s)
            except Exception as exc:  # the store is unreachable: the watcher decides when to give up
                log.warning("block %d: cannot renew the lease: %s", self.block_id, exc)
                continue
            if not kept:
                self._lose("another claim took the block over")
                return
            self._renewed = time.monotonic()

    def _watch(self) -> None:
        # Renewal calls can hang on a broken link; this thread only looks at the clock.
        deadline = self.lease_s - self.renew_s
        while not self._stop.wait(min(1.0, self.renew_s)):
            if time.monotonic() - self._renewed >= deadline:
                self._lose(f"no renewal for {deadline:.0f} s")
                return

    def _lose(self, why: str) -> None:
        with self._lock:
            if self.lost is not None or self._stop.is_set():
                return
            self.lost = why
        log.warning("block %d: lease lost (%s); stopping its bots", self.block_id, why)
        metrics.LEASES_LOST.inc()
        try:
            self.on_lost()
        except Exception:
            log.exception("block %d: stopping the bots failed", self.block_id)


class ProcessGroup:
    """A launcher that remembers the bot processes it started, so they can all be stopped at once."""

    _live: ClassVar[weakref.WeakSet[ProcessGroup]] = weakref.WeakSet()

    def __init__(self, launch: Launcher | None) -> None:
        self.launch = launch
        self.processes: list[subprocess.Popen[bytes]] = []
        self.stopped = False
        ProcessGroup._live.add(self)

    @classmethod
    def kill_all(cls) -> None:
        """Kill the bots of every block this process plays (a pool process told to stop)."""
        for group in list(cls._live):
            group.kill()

    def __call__(self, argv: list[str], env: dict[str, str], **options: Any) -> subprocess.Popen[bytes]:
        if self.launch is None:
            process: subprocess.Popen[bytes] = subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, **options
            )
        else:
            process = self.launch(argv, env, **options)
        self.processes.append(process)
        if self.stopped:
            _kill(process)
        return process

    def kill(self) -> None:
        """Kill every bot started (and any started later)."""
        self.stopped = True
        for process in list(self.processes):
            _kill(process)


def _kill(process: object) -> None:
    with contextlib.suppress(Exception):
        process.kill()  # type: ignore[attr-defined]


@contextlib.contextmanager
def block_directories(block_id: int) -> Iterator[tuple[Path, Path]]:
    """The block's directory (its bots' files) and the one for its bots' private directories,
    both named after this process so that :func:`sweep` can tell when their owner is gone."""
    pid = os.getpid()
    with (
        tempfile.TemporaryDirectory(prefix=BLOCK_DIR.format(block=block_id, pid=pid)) as files,
        tempfile.TemporaryDirectory(prefix=BOTS_DIR.format(block=block_id, pid=pid)) as bots,
    ):
        for path in (files, bots):
            os.chmod(path, 0o711)  # sandbox users reach their own directories inside
        yield Path(files), Path(bots)


def remove_own(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove every block and bot directory of this process now (it is being stopped and exits
    without running its ``with`` blocks' cleanup); returns what went."""
    base = Path(directory or tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for path in base.iterdir():
            match = _OWNED.fullmatch(path.name)
            if match is None or int(match.group(1)) != os.getpid():
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def sweep(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the block and bot directories whose owning process is gone; returns what went.

    Looks in ``directory`` (default: the temporary directory, where :func:`block_directories`
    makes them). A directory of a live process is never touched.
    """
    base = Path(directory or tempfile.gettempdir())
    removed = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return []
    for path in entries:
        match = _OWNED.fullmatch(path.name)
        if match is None or procs.alive(int(match.group(1))) or not path.is_dir():
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    if removed:
        log.info("swept %d directories of blocks whose worker is gone", len(removed))
    return removed
