"""The steps' deadlines, kept in one queue per event loop with one timer at the earliest.

Every match step waits for its seats until a deadline (docs/protocol.md, time control). A timer
per step (``loop.call_at``, cancelled when the answers come first) costs a timer object, a push
on the loop's heap and a cancellation per step. Steps asked one after another with the same
time control have deadlines in the order they were asked, so a queue in that order, with one
timer armed at its head, gives every step the same deadline: when the timer fires, every step
whose deadline has come is told, in deadline order, and the timer is armed at the next one. A
deadline earlier than the queue's last (a seat whose bank was spent) gets a timer of its own.
A step answered in time cancels its entry, which is dropped when it reaches the head (or when
the dropped entries are over half the queue).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable

COMPACT_AT = 1024
"""Cancelled entries in the queue before it is rebuilt without them (when they are over half)."""


class Deadline:
    """One step's deadline in a :class:`Deadlines` queue; :meth:`cancel` when it is not needed."""

    __slots__ = ("callback", "owner", "when")

    def __init__(self, owner: Deadlines, when: float, callback: Callable[[], None]) -> None:
        self.owner = owner
        self.when = when
        self.callback: Callable[[], None] | None = callback

    def cancel(self) -> None:
        if self.callback is not None:
            self.callback = None
            self.owner.cancelled()


class Deadlines:
    """The deadlines of every step on one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: deque[Deadline] = deque()
        self.timer: asyncio.TimerHandle | None = None
        self.dead = 0
        """Cancelled entries still in the queue."""
        self.armed = 0
        """Deadlines asked for so far (:meth:`at`), for tests and diagnostics."""
        # asyncio's own loops know their clock's resolution (a private attribute); others: 1 ns.
        self._slack: float = float(getattr(loop, "_clock_resolution", 1e-9))

    def at(self, when: float, callback: Callable[[], None]) -> Deadline | asyncio.TimerHandle:
        """Call ``callback`` at loop time ``when`` (unless cancelled first)."""
        self.armed += 1
        queue = self.queue
        if queue and when < queue[-1].when:
            return self.loop.call_at(when, callback)  # out of order: a timer of its own
        entry = Deadline(self, when, callback)
        queue.append(entry)
        if self.timer is None:
            self.timer = self.loop.call_at(when, self._fire)
        return entry

    def cancelled(self) -> None:
        self.dead += 1
        if self.dead > COMPACT_AT and self.dead * 2 > len(self.queue):
            self.queue = deque(entry for entry in self.queue if entry.callback is not None)
            self.dead = 0
            if not self.queue and self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def _fire(self) -> None:
        self.timer = None
        queue = self.queue
        # As the loop runs a timer: due within the clock's resolution of now.
        due = self.loop.time() + self._slack
        while queue and queue[0].when <= due:
            entry = queue.popleft()
            callback = entry.callback
            if callback is None:
                self.dead -= 1
                continue
            entry.callback = None
            try:
                callback()  # may add deadlines: at the tail, after every entry due now
            except Exception as exc:  # one step's failure must not stop the others' deadlines
                self.loop.call_exception_handler(
                    {"message": "a deadline's callback failed", "exception": exc}
                )
        while queue and queue[0].callback is None:
            queue.popleft()
            self.dead -= 1
        if queue and self._unarmed():
            self.timer = self.loop.call_at(queue[0].when, self._fire)

    def _unarmed(self) -> bool:
        """Whether no timer is set. A method, not ``self.timer is None`` in :meth:`_fire`: mypy
        holds ``self.timer`` narrowed to ``None`` there across the callbacks, which may set it,
        and the compiled driver (referee.accel) would check that it is."""
        return self.timer is None


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Deadlines] = weakref.WeakKeyDictionary()


def deadlines(loop: asyncio.AbstractEventLoop) -> Deadlines:
    """The deadline queue of ``loop``."""
    queue = _by_loop.get(loop)
    if queue is None:
        queue = _by_loop[loop] = Deadlines(loop)
    return queue
