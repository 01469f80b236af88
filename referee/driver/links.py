"""How the driver reaches an entrant's bot: one link per entrant token, many seats per link.

A link outlives connections: it exists from the moment the matches are created, a bot process
attaches to it by presenting the token, and if that connection breaks the link remembers why.
The transport side (the gRPC servicer, or an in-process runner) implements :class:`Outbox`;
the driver side asks for decisions and publishes starts, events and game overs.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.rules.core import Action, Decision, Event, Outcome, View


class FaultKind(enum.Enum):
    """Why a seat got the default action instead of its own."""

    TIMEOUT = "timeout"
    """No answer within the decision time plus the seat's time bank."""
    CRASH = "crash"
    """The connection broke: the process died or the stream failed."""
    DISCONNECT = "disconnect"
    """The bot never connected, or closed its stream while its matches were running."""
    ILLEGAL = "illegal"
    """The action is not among the legal options."""
    PROTOCOL = "protocol"
    """A malformed, unsolicited, duplicate or oversized message, or a flood."""


@dataclass(slots=True)
class SeatStats:
    """What one seat of one match did: faults by kind, defaults, decisions and think time."""

    entrant: str
    faults: dict[FaultKind, int] = field(default_factory=dict)
    defaulted: int = 0
    decisions: int = 0
    think_seconds: float = 0.0
    bank_seconds: float = 0.0
    forfeited: bool = False
    finished: bool = False
    on_fault: Callable[[FaultKind], None] | None = field(default=None, repr=False, compare=False)
    """Told of every fault as it is counted (the driver reports faults to its observer)."""

    def fault(self, kind: FaultKind) -> None:
        """Count one fault."""
        self.faults[kind] = self.faults.get(kind, 0) + 1
        if self.on_fault is not None:
            self.on_fault(kind)

    @property
    def total_faults(self) -> int:
        """All faults of the seat."""
        return sum(self.faults.values())


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What a bot learns when one of its games starts."""

    match_id: str
    seat: int
    variant: str
    config: dict[str, Any]
    seat_seed: int
    seat_names: tuple[str, ...]


class Step:
    """The answers one match step waits for: one future for all its seats, not one per seat."""

    __slots__ = ("_loop", "future", "missing", "results")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.future: asyncio.Future[None] = self._loop.create_future()
        self.missing: set[int] = set()
        self.results: dict[int, tuple[Action | Defaulted, float]] = {}
        """seat → (the action, or why it is defaulted; loop time of the answer)."""

    def expect(self, seat: int) -> None:
        """``seat`` must answer in this step."""
        self.missing.add(seat)

    def deliver(self, seat: int, value: Action | Defaulted) -> bool:
        """Record a seat's answer (the first one counts); ``False`` if it was not expected."""
        if seat not in self.missing:
            return False
        self.missing.discard(seat)
        self.results[seat] = (value, self._loop.time())
        if not self.missing:
            self.wake()
        return True

    def wake(self) -> None:
        """Let the driver look at the step now (all answered, or a deadline passed)."""
        if not self.future.done():
            self.future.set_result(None)

    def rearm(self) -> None:
        """A fresh future for the next wait."""
        if self.future.done():
            self.future = self._loop.create_future()


@dataclass(slots=True)
class Request:
    """A decision sent to a bot and not answered yet."""

    id: int
    match_id: str
    seat: int
    decision: Decision
    view: View
    deadline_ms: int
    bank_ms: int
    step: Step


class Outbox(Protocol):
    """The transport of one live connection; pushes are buffered and sent in batches."""

    def push_start(self, info: GameInfo) -> None: ...

    def push_request(self, request: Request) -> None: ...

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None: ...

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None: ...

    def close(self, reason: str) -> None: ...


class Defaulted(Exception):
    """A request that the referee answers with the default action (the fault is counted already)."""


class EntrantLink:
    """One entrant's seats, its current connection, and its pending requests."""

    _ids = itertools.count(1)

    def __init__(self, entrant: str, token: str, connect_deadline: float) -> None:
        self.entrant = entrant
        self.token = token
        self.connect_deadline = connect_deadline
        """Loop time after which a seat whose bot never connected is defaulted."""
        self.outbox: Outbox | None = None
        self.ever_connected = False
        self.lost: FaultKind | None = None
        self.seats: dict[tuple[str, int], SeatStats] = {}
        self.games: dict[tuple[str, int], GameInfo] = {}
        self.pending: dict[int, Request] = {}
        self.expired: set[int] = set()
        """Requests that timed out: a late answer to one is ignored (the timeout is its fault)."""
        self._attached = asyncio.Event()

    # -- the transport side ---------------------------------------------------------------

    def attach(self, outbox: Outbox) -> list[tuple[str, int]]:
        """A bot connected with this link's token; returns its seats. Replays live games."""
        if self.outbox is not None:
            raise PermissionError(f"entrant {self.entrant!r} is already connected")
        self.outbox = outbox
        self.ever_connected = True
        self.lost = None
        self._attached.set()
        for key, info in self.games.items():
            if not self.seats[key].finished:
                outbox.push_start(info)
        return sorted(self.seats)

    def detach(self, kind: FaultKind) -> None:
        """The connection ended (``CRASH``, ``DISCONNECT`` or ``PROTOCOL``); fail what is pending."""
        if self.outbox is None:
            return
        self.outbox = None
        self._attached.clear()
        self.lost = kind
        live = [stats for stats in self.seats.values() if not stats.finished]
        for stats in live:
            stats.fault(kind)
        pending, self.pending = self.pending, {}
        for request in pending.values():
            request.step.deliver(request.seat, Defaulted(kind.value))

    def answer(self, request_id: int, action: Action) -> bool:
        """A bot's reply; ``False`` (and a protocol fault) if nothing with that id is pending."""
        request = self.pending.pop(request_id, None)
        if request is None or not request.step.deliver(request.seat, action):
            if not self._late(request_id):
                self.protocol_fault()
            return False
        return True

    def reject(self, request_id: int, kind: FaultKind) -> None:
        """A reply that holds no usable action: default it now, with a fault of ``kind``."""
        request = self.pending.pop(request_id, None)
        if request is None or not request.step.deliver(request.seat, Defaulted(kind.value)):
            if not self._late(request_id):
                self.protocol_fault()
            return
        self.seats[(request.match_id, request.seat)].fault(kind)

    def _late(self, request_id: int) -> bool:
        """Whether ``request_id`` timed out (once: answering it again is a duplicate)."""
        if request_id in self.expired:
            self.expired.discard(request_id)
            return True
        return False

    def protocol_fault(self) -> None:
        """Charge a protocol fault to every live seat of this link."""
        for stats in self.seats.values():
            if not stats.finished:
                stats.fault(FaultKind.PROTOCOL)

    @property
    def live(self) -> bool:
        """Whether any seat of this link is still playing."""
        return any(not stats.finished for stats in self.seats.values())

    # -- the driver side ------------------------------------------------------------------

    def register(self, info: GameInfo, stats: SeatStats) -> None:
        """A seat of a new match belongs to this link."""
        key = (info.match_id, info.seat)
        self.seats[key] = stats
        self.games[key] = info
        if self.outbox is not None:
            self.outbox.push_start(info)

    async def wait_attached(self) -> bool:
        """Wait for a first connection until the connect deadline; ``True`` once connected."""
        if self.outbox is not None:
            return True
        if self.ever_connected:
            return False
        loop = asyncio.get_running_loop()
        remaining = self.connect_deadline - loop.time()
        if remaining <= 0:
            return False
        try:
            await asyncio.wait_for(self._attached.wait(), remaining)
        except TimeoutError:
            return False
        return True

    def ask(
        self,
        step: Step,
        match_id: str,
        seat: int,
        decision: Decision,
        view: View,
        deadline_ms: int,
        bank_ms: int,
    ) -> int:
        """Send a decision request; the answer is delivered to ``step``. Returns the request id.

        With no connection to ask, ``step`` gets a :class:`Defaulted` at once.
        """
        step.expect(seat)
        if self.outbox is None:
            step.deliver(seat, Defaulted("no connection"))
            return 0
        request = Request(next(self._ids), match_id, seat, decision, view, deadline_ms, bank_ms, step)
        self.pending[request.id] = request
        self.outbox.push_request(request)
        return request.id

    def forget(self, request_id: int) -> None:
        """Drop a request that timed out; a late answer to it is ignored."""
        if self.pending.pop(request_id, None) is not None:
            self.expired.add(request_id)

    def publish(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        """Public events of one of this link's matches."""
        if self.outbox is not None:
            self.outbox.push_events(match_id, step, events)

    def finish(self, match_id: str, seat: int, outcome: Outcome) -> None:
        """A seat's game is over."""
        key = (match_id, seat)
        self.seats[key].finished = True
        if self.outbox is not None:
            self.outbox.push_over(match_id, seat, outcome)
        if not self.live and self.outbox is not None:
            self.outbox.close("all games over")
