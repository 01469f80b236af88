"""The messages that hand blocks to the workers, and which of them a worker plays.

A ``sixnimmt.play_block`` message names the store it was sent for (the store's id, written at
migration: :func:`workers.store.repo.store_id`), the league and the block, as the task's
arguments ``(block, league, store)``. Everything that queues a block builds it here
(:meth:`BlockMessage.of`): ``league start``, ``league run`` with a broker, the reconciliation and
the task that adds a league's next round.

A worker plays a message only if it names the worker's own store, a block of that store and the
league that block belongs to, and that league was handed to the workers (``started_at``). So a
worker pointed at another deployment's broker, or sharing a broker with another store, plays
none of the other store's blocks, even where block and league ids coincide; and no message, sent
by hand or forged, makes a worker play a league nobody started. Anything else is refused
(:func:`accept`): acknowledged and dropped, since no redelivery would make it right, counted in
``sixnimmt_worker_messages_refused_total{reason}`` and logged once per worker for each reason,
store and league (:class:`RefusalLog`), not once per message. A message in the format before
messages named their store (a block id alone) is refused too: it cannot say which store it
was meant for. Refusing loses no work: the reconciliation counts only messages naming its own
store, so it queues the started leagues' blocks such messages were for again.
"""

from __future__ import annotations

import enum
import fcntl
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from sqlalchemy import Engine

from workers import metrics
from workers.store import repo
from workers.store.repo.leagues import block_league

log = logging.getLogger(__name__)

TASK = "sixnimmt.play_block"

STORE_ID = re.compile(r"[0-9a-f]{32}")
"""What a store id looks like (``uuid4().hex``, migration 0007); anything else is malformed."""


class Refusal(enum.Enum):
    """Why a worker refused a message (the ``reason`` label of the refusals counter)."""

    OLD_FORMAT = "old_format"
    """A block id alone: sent before messages named their store and league."""
    MALFORMED = "malformed"
    """Arguments that are not ``(block, league, store)`` with two positive integers and a store id."""
    OTHER_STORE = "other_store"
    """Meant for another store: a broker shared with another deployment, or a worker pointed at
    the wrong store."""
    UNKNOWN_BLOCK = "unknown_block"
    """This store has no such block."""
    OTHER_LEAGUE = "other_league"
    """The block is not one of the named league's."""
    NOT_STARTED = "not_started"
    """The league was never handed to the workers (``league start``)."""


for _refusal in Refusal:  # every series exists from the start, so increase() sees the first one
    metrics.MESSAGES_REFUSED.labels(_refusal.value)


@dataclass(frozen=True, slots=True)
class BlockMessage:
    """What a ``sixnimmt.play_block`` message names: a block of a league of a store."""

    store: str
    league: int
    block: int

    @classmethod
    def of(cls, engine: Engine, league_id: int, block_id: int) -> BlockMessage:
        """The message for a block of ``engine``'s store."""
        return cls(repo.store_id(engine), league_id, block_id)

    def args(self) -> tuple[int, int, str]:
        """The task's positional arguments: the block first, as every log line of a task shows it."""
        return (self.block, self.league, self.store)


def parse(args: Sequence[Any], kwargs: Mapping[str, Any]) -> BlockMessage | Refusal:
    """A message's arguments as a :class:`BlockMessage`, or why they are not one."""
    if kwargs or len(args) not in (1, 3):
        return Refusal.MALFORMED
    if len(args) == 1:
        return Refusal.OLD_FORMAT if _positive_int(args[0]) else Refusal.MALFORMED
    block, league, store = args
    if not (_positive_int(block) and _positive_int(league) and isinstance(store, str)):
        return Refusal.MALFORMED
    if not STORE_ID.fullmatch(store):
        return Refusal.MALFORMED
    return BlockMessage(store, league, block)


def _positive_int(value: Any) -> bool:
    return type(value) is int and value > 0


def check(engine: Engine, message: BlockMessage) -> Refusal | None:
    """Whether this store's worker may play ``message`` (``None``) or why not.

    Store errors are raised, not taken for refusals: the task retries them.
    """
    if message.store != repo.store_id(engine):
        return Refusal.OTHER_STORE
    found = block_league(engine, message.block)  # the block's league and its phase: one statement
    if found is None:
        return Refusal.UNKNOWN_BLOCK
    league_id, phase = found
    if league_id != message.league:
        return Refusal.OTHER_LEAGUE
    if phase == "created":
        return Refusal.NOT_STARTED
    return None


def accept(engine: Engine, args: Sequence[Any], kwargs: Mapping[str, Any]) -> BlockMessage | None:
    """The message to play, or ``None`` once it is refused: counted and logged (once) here."""
    message = parse(args, kwargs)
    refusal = message if isinstance(message, Refusal) else check(engine, message)
    if refusal is None:
        assert isinstance(message, BlockMessage)
        return message
    metrics.MESSAGES_REFUSED.labels(refusal.value).inc()
    REFUSALS.note(refusal, message if isinstance(message, BlockMessage) else None, args, engine)
    return None


class RefusalLog:
    """Logs each kind of refused message once per worker: per reason, store and league.

    A worker's pool processes share what was logged through a file that the worker's main
    process opens, already unlinked, before it forks them (:meth:`share`): a killed worker leaves
    nothing behind. Without it (a solo pool, a task applied in-process) each process logs once.
    At most ``limit`` kinds are logged, so a flood of forged ids cannot grow it without bound;
    the counter goes on counting.
    """

    DIGEST = 16

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self._shared: IO[bytes] | None = None
        self._seen: set[tuple[str, str, int]] = set()
        self._full = False
        self._lock = threading.Lock()

    def share(self) -> None:
        """Log once across this process and the processes forked from it after this call."""
        self._shared = tempfile.TemporaryFile(prefix="sixnimmt-refused-")  # noqa: SIM115 - for the worker's life
        self._seen.clear()
        self._full = False

    def first(self, key: tuple[str, str, int]) -> bool:
        """Whether ``key`` is seen for the first time (by any process that shares the log)."""
        with self._lock:
            if key in self._seen:
                return False
            if len(self._seen) >= self.limit:
                return self._too_many()
            self._seen.add(key)
            if self._shared is None:
                return True
            try:
                return self._first_shared(hashlib.sha256(repr(key).encode()).digest()[: self.DIGEST])
            except OSError:  # log here rather than never
                return True

    def _first_shared(self, digest: bytes) -> bool:
        assert self._shared is not None
        fd = self._shared.fileno()
        # A POSIX record lock: held per process, so it excludes the other pool processes (a
        # flock on the inherited descriptor would be shared with them).
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            known = os.pread(fd, size, 0)
            if any(known[i : i + self.DIGEST] == digest for i in range(0, size, self.DIGEST)):
                return False
            if size >= self.limit * self.DIGEST:
                return self._too_many()
            os.pwrite(fd, digest, size)
            return True
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)

    def _too_many(self) -> bool:
        if not self._full:
            self._full = True
            log.warning(
                "%d kinds of refused messages logged: no more are"
                " (sixnimmt_worker_messages_refused_total counts them all)",
                self.limit,
            )
        return False

    def note(
        self, refusal: Refusal, message: BlockMessage | None, args: Sequence[Any], engine: Engine
    ) -> None:
        """Log a refusal, the first time its reason, store and league are seen."""
        store, league = (message.store, message.league) if message else ("", 0)
        if not self.first((refusal.value, store, league)):
            return
        ours = _own_store(engine)
        if refusal is Refusal.OLD_FORMAT:
            what = (
                f"a message in the format before messages named their store (block {args[0]} alone):"
                " drain the queues before upgrading the workers; the reconciliation sends the started"
                " leagues' blocks again"
            )
        elif refusal is Refusal.MALFORMED:
            what = f"a malformed message {_shown(args)}: not (block, league, store)"
        elif refusal is Refusal.OTHER_STORE:
            what = (
                f"messages of store {store} (league {league}); this worker's store is {ours}:"
                " a broker shared with another deployment?"
            )
        elif refusal is Refusal.NOT_STARTED:
            what = f"blocks of league {league}, which was never started ('sixnimmt league start')"
        elif refusal is Refusal.OTHER_LEAGUE:
            what = f"messages naming league {league} for blocks of another league ({_block(message)})"
        else:
            what = f"messages for blocks this store does not have (league {league}, {_block(message)})"
        log.warning("%s refused %s; dropped, and others like them are not logged", TASK, what)


def _block(message: BlockMessage | None) -> str:
    return f"block {message.block}" if message else "no block"


def _own_store(engine: Engine) -> str:
    try:
        return repo.store_id(engine)
    except Exception as exc:  # only for the log line
        return f"unknown ({type(exc).__name__})"


def _shown(args: Sequence[Any]) -> str:
    """Arguments from the broker, printable: ``repr`` escapes control characters; cut short."""
    text = repr(tuple(args))
    return text if len(text) <= 120 else text[:117] + "..."


REFUSALS = RefusalLog()
"""This process's refusal log (shared by a worker's pool processes: :func:`share_refusal_log`)."""


def share_refusal_log() -> None:
    """Called by a worker's main process before its pool processes are forked (workers.queue.app)."""
    REFUSALS.share()
