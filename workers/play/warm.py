"""Warm bots: a worker process's live sandboxed bot processes per bot version, and its one referee.

Starting four sandboxed bots was about three quarters of a league block's wall time. A
:class:`WarmPool` keeps the bot processes of the blocks it played, each connected to the pool's
long-lived referee with a standing token (docs/protocol.md, "Standing entrants"), and hands a
later block of the same bot version the live process: its matches go over the existing stream.

- **Bounds.** At most ``SIXNIMMT_WARM_BOTS`` processes and ``SIXNIMMT_WARM_MEMORY_MB`` of
  resident memory (the bot's whole process tree) together; past either, idle processes go least
  recently used first. A busy process is never evicted.
- **Never reused after trouble.** A process that exited, whose seats had any fault in the block,
  that played for a block whose lease was lost, or that used half of its CPU limit (the sandbox's
  RLIMIT_CPU counts over the process's life, not per block) is retired (its standing token
  closed, the process waited for), and the next block gets a new one.
- **Each deal once.** A process records the deal seeds of the matches it was given and is never
  given another match of one of them (:meth:`WarmPool.take`): with the league's lanes
  (``arena.matches.Lanes``) no process ever holds two hands of one deal, across blocks too.
- **What carries over.** The process and its memory (module globals, caches, a loaded model);
  never a game object: the SDK makes one per match and seat, from that match's seat seed. A league
  that wants no memory between blocks asks for fresh processes (``league create
  --fresh-processes``; docs/league.md).

The pool belongs to one process (:func:`pool` makes it on first use, after a fork) and is closed
at exit; its directory is named like a block's (block 0) so :func:`workers.play.lease.sweep` removes
it once its process is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing.util
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.matches import BotProcess, ProcessExit, RefereeClient, spawn_bot
from arena.referee_thread import referee_in_thread
from referee.settings import load as load_settings
from workers.play.lease import BLOCK_DIR, ProcessGroup
from workers.sandbox import sandbox_for

log = logging.getLogger(__name__)

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
RETIRE_WAIT_S = 10.0
"""How long a retired bot has to leave after its goodbye before it is killed."""
CPU_SHARE = 0.5
"""A warm bot that used this share of its CPU limit is retired after its block."""


@dataclass(frozen=True, slots=True)
class Version:
    """What a warm process runs: one stored bot version of one game."""

    sha256: str
    entry_point: str
    variant: str


@dataclass(eq=False, slots=True)
class WarmBot:
    """One live bot process of the pool, connected with a standing token."""

    version: Version
    token: str
    process: BotProcess
    last_used: float = field(default_factory=time.monotonic)
    blocks: int = 0
    """Blocks it has played."""
    busy: bool = True
    rss_bytes: int = 0
    """Resident memory of its process tree at its latest reading (:meth:`WarmPool.memory_mb`)."""
    read_at: float = float("-inf")
    """When that reading was taken (``time.monotonic()``)."""
    seeds: set[int] = field(default_factory=set)
    """The deal seeds of every match it was given: it is never given another match of these
    (:meth:`WarmPool.take`; a process that played one seat of a deal knows that seat's hand)."""


MEMORY_READING_S = 1.0
"""A warm bot's memory reading is reused for this long: every block gives back four bots, and each
give-back checks the pool's bound over every bot (a few ``/proc`` reads per bot)."""


class WarmPool:
    """Live bot processes by version, and the referee they are connected to (see the module)."""

    def __init__(
        self,
        *,
        max_bots: int | None = None,
        max_memory_mb: int | None = None,
        sandbox: bool = True,
        cpu_limit_s: float | None = None,
    ) -> None:
        settings = load_settings()
        self.max_bots = settings.warm_bots if max_bots is None else max_bots
        self.max_memory_mb = settings.warm_memory_mb if max_memory_mb is None else max_memory_mb
        self.cpu_limit_s = float(settings.sandbox_cpu_s if cpu_limit_s is None else cpu_limit_s)
        self.root = Path(tempfile.mkdtemp(prefix=BLOCK_DIR.format(block=0, pid=os.getpid()) + "warm-"))
        os.chmod(self.root, 0o711)
        self.code = self.root / "code"
        """One directory per version, unpacked once: ``code/<sha256>``."""
        self.private = self.root / "bots"
        """The sandboxed bots' private directories."""
        for path in (self.code, self.private):
            path.mkdir()
            os.chmod(path, 0o711)
        self.launch = _sandbox(self.code, self.private) if sandbox else None
        self.group = ProcessGroup(self.launch)
        """Every process the pool starts: a pool process told to stop kills them all at once."""
        self.bots: list[WarmBot] = []
        """Every live process, least recently used first."""
        self.started = 0
        """Processes started over the pool's life (for tests and benchmarks)."""
        self.retired: list[tuple[Version, str]] = []
        """(version, why) of the latest retired processes."""
        self.decision_ms: dict[str, float] = {}
        """Bot version (SHA-256) → its mean time per decision in its latest block, as the referee
        measured it: whether blocks may share its process (``workers.play.execute.play_blocks``)."""
        self._stack = contextlib.ExitStack()
        self._client: RefereeClient | None = None
        self._lock = threading.Lock()

    # -- the referee ---------------------------------------------------------------------------

    @property
    def client(self) -> RefereeClient:
        """The pool's referee (started on first use), serving on ``root/referee.sock``."""
        if self._client is None:
            self._client = self._stack.enter_context(referee_in_thread(self.root))
        return self._client

    # -- taking and giving back ----------------------------------------------------------------

    def code_dir(self, version: Version, unpack: Callable[[Path], None]) -> Path:
        """The version's unpacked code (``unpack(directory)`` writes it the first time)."""
        directory = self.code / version.sha256
        if not directory.exists():
            partial = self.code / f".{version.sha256}.{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            unpack(partial)
            for path in [partial, *partial.rglob("*")]:
                os.chmod(path, 0o755 if path.is_dir() else 0o644)  # readable by the bot's user
            partial.rename(directory)
        return directory

    def take(self, version: Version, spec: str, name: str, seeds: Iterable[int] = ()) -> WarmBot:
        """A live process of ``version`` for matches of these deal ``seeds``: an idle warm one
        that has played none of them, else a new one. The seeds are added to its record.

        A process is never given a deal it has seen: the blocks of an SPRT test's pair share a
        deal, and a field bot's process that played one of them would know the other's hands.
        """
        wanted = set(seeds)
        with self._lock:
            for bot in reversed(self.bots):  # the most recently used first
                if bot.busy or bot.version != version or not wanted.isdisjoint(bot.seeds):
                    continue
                if bot.process.poll() is not None:
                    self._retire(bot, "exited while idle")
                    continue
                bot.busy = True
                bot.seeds |= wanted
                return bot
        token = self.client.open_standing(name)
        process = spawn_bot(
            spec,
            referee=self.client.address,
            token=token,
            variant=version.variant,
            name=name,
            launch=self.group,
        )
        bot = WarmBot(version, token, process, seeds=wanted)
        with self._lock:
            self.bots.append(bot)
            self.started += 1
        return bot

    def warm_versions(self) -> set[str]:
        """The SHA-256 of every version with a live process in the pool (busy or idle)."""
        return {bot.version.sha256 for bot in self.bots}

    def give_back(self, bot: WarmBot, *, reusable: bool, why: str = "") -> ProcessExit | None:
        """A block is done with ``bot``: kept warm when ``reusable`` and still healthy, else retired
        (returns how the retired process ended)."""
        with self._lock:
            bot.blocks += 1
            bot.last_used = time.monotonic()
            if reusable:
                why = self._unhealthy(bot)
            if not reusable or why:
                return self._retire(bot, why or "retired")
            bot.busy = False
            self.bots.remove(bot)
            self.bots.append(bot)  # most recently used last
            self._bound()
            return None

    def _unhealthy(self, bot: WarmBot) -> str:
        if bot.process.poll() is not None:
            return "exited"
        cpu, bot.rss_bytes = tree_usage(bot.process.pid)  # one read of each process's stat
        bot.read_at = time.monotonic()
        if self.cpu_limit_s and cpu >= CPU_SHARE * self.cpu_limit_s:
            return f"used {cpu:.0f} s of its {self.cpu_limit_s:.0f} s CPU limit"
        return ""

    def _bound(self) -> None:
        """Evict idle processes, least recently used first, while over a bound."""
        while True:
            idle = [b for b in self.bots if not b.busy]
            if not idle:
                return
            if len(self.bots) > self.max_bots:
                self._retire(idle[0], f"evicted: more than {self.max_bots} warm bots")
                continue
            if self.max_memory_mb and self.memory_mb() > self.max_memory_mb:
                self._retire(idle[0], f"evicted: warm bots over {self.max_memory_mb} MB")
                continue
            return

    def memory_mb(self, max_age_s: float = MEMORY_READING_S) -> float:
        """Resident memory of every live process of the pool, its whole tree, in MiB.

        A bot's reading is taken again when it is older than ``max_age_s`` (a bot given back was
        read just then, in the same pass as its CPU time).
        """
        now = time.monotonic()
        for bot in self.bots:
            if now - bot.read_at > max_age_s:
                bot.rss_bytes = tree_usage(bot.process.pid)[1]
                bot.read_at = now
        return sum(bot.rss_bytes for bot in self.bots) / (1 << 20)

    def _retire(self, bot: WarmBot, why: str) -> ProcessExit:
        if bot in self.bots:
            self.bots.remove(bot)
        self.retired = [*self.retired[-99:], (bot.version, why)]
        log.debug("warm bot %s retired: %s", bot.version.sha256[:12], why)
        if self._client is not None and bot.process.poll() is None:
            with contextlib.suppress(Exception):
                self._client.close_standing([bot.token], "retired")
        try:
            bot.process.wait(RETIRE_WAIT_S)
        except subprocess.TimeoutExpired:
            bot.process.kill()
            bot.process.wait()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close_standing([bot.token])
        return bot.process.exit()

    def kill(self, bots: Sequence[WarmBot]) -> None:
        """Kill ``bots`` now (a block's lease was lost): they are retired when given back."""
        for bot in bots:
            with contextlib.suppress(Exception):
                bot.process.kill()

    def abandon(self) -> None:
        """Kill every process and remove the pool's directory now (this process is being stopped)."""
        for bot in list(self.bots):
            with contextlib.suppress(Exception):
                bot.process.kill()
        self.bots = []
        shutil.rmtree(self.root, ignore_errors=True)

    def close(self) -> None:
        """Retire every process, stop the referee, remove the pool's directory."""
        with self._lock:
            for bot in list(self.bots):
                self._retire(bot, "the pool closed")
        self._stack.close()
        self._client = None
        shutil.rmtree(self.root, ignore_errors=True)


def _sandbox(code: Path, private: Path) -> Any:
    launch = sandbox_for(code)
    launch.workdir = private
    return launch


# -- the process tree: resident memory and CPU time ---------------------------------------------


def _tree(pid: int) -> Iterator[int]:
    yield pid
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            kids = [int(c) for c in children.read().split()]
    except OSError:
        return
    for kid in kids:
        yield from _tree(kid)


def tree_usage(pid: int) -> tuple[float, int]:
    """CPU time (user + system, seconds) and resident memory (bytes) of ``pid`` and its
    descendants (a sandboxed bot is bwrap, sh, the bot), from one read of each one's ``stat``."""
    cpu, rss = 0.0, 0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
            rss += int(fields[21]) * PAGE  # rss, in pages
        except (OSError, IndexError, ValueError):
            continue
    return cpu, rss


# -- one pool per process -----------------------------------------------------------------------

_POOL: WarmPool | None = None
_POOL_PID = 0
_POOL_LOCK = threading.Lock()


def pool(*, sandbox: bool = True) -> WarmPool | None:
    """This process's warm pool (made on first use); ``None`` when ``SIXNIMMT_WARM_BOTS`` is 0."""
    global _POOL, _POOL_PID
    if load_settings().warm_bots == 0:
        return None
    with _POOL_LOCK:
        if _POOL is None or os.getpid() != _POOL_PID:  # a forked child starts its own
            _POOL = WarmPool(sandbox=sandbox)
            _POOL_PID = os.getpid()
            atexit.register(_close_pool, _POOL)
            # A multiprocessing child (the local pool's processes) skips atexit; its finalizers run.
            multiprocessing.util.Finalize(_POOL, _close_pool, args=(_POOL,), exitpriority=10)
        return _POOL


def current() -> WarmPool | None:
    """This process's pool if it has one (no new pool is made)."""
    return _POOL if _POOL is not None and os.getpid() == _POOL_PID else None


def close_pool() -> None:
    """Close this process's pool (its bots, its referee); the next :func:`pool` makes a new one."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None and os.getpid() == _POOL_PID:
            _close_pool(_POOL)
        _POOL = None


def _close_pool(warm: WarmPool) -> None:
    with contextlib.suppress(Exception):
        warm.close()
