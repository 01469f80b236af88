"""How the driver reaches an entrant's bot: one link per entrant token, many seats per link.

A link outlives connections: it exists from the moment the matches are created, a bot process
attaches to it by presenting the token, and if that connection breaks the link remembers why.
The transport side (the gRPC servicer, or an in-process runner) implements :class:`Outbox`;
the driver side asks for decisions and publishes starts, events and game overs.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.faults import FaultKind, FaultNotice, add_reason
from referee.rules.core import Action, Decision, Event, Outcome, View

RECENT_IDS = 4096
"""Answered or expired request ids a link remembers, so a second answer is charged to its seat."""
MAX_STRAYS = 64
"""Replies naming no request of the connection (and unexpected messages) before it is a flood."""


@dataclass(slots=True)
class SeatStats:
    """What one seat of one match did: faults by kind and reason, defaults, decisions, think time."""

    entrant: str
    faults: dict[FaultKind, int] = field(default_factory=dict)
    defaulted: int = 0
    decisions: int = 0
    think_seconds: float = 0.0
    bank_seconds: float = 0.0
    forfeited: bool = False
    finished: bool = False
    """Set by :meth:`EntrantLink.finish` (which counts the link's seats still playing) only."""
    reasons: dict[tuple[FaultKind, str], int] = field(default_factory=dict)
    """(kind, reason) → count, bounded (see :func:`referee.faults.add_reason`)."""
    total_faults: int = field(default=0, init=False)
    """All faults of the seat (the sum of ``faults``, kept as they are counted: the driver reads
    it for every decision)."""
    on_fault: Callable[[SeatStats, FaultKind, str, int], None] | None = field(
        default=None, repr=False, compare=False
    )
    """Told of every fault as it is counted, with its reason and request id (the driver reports
    it to its observer, logs it and tells the bot)."""

    def fault(self, kind: FaultKind, reason: str = "", request_id: int = 0) -> None:
        """Count one fault, with why it happened and the request it is about (0: none)."""
        self.faults[kind] = self.faults.get(kind, 0) + 1
        self.total_faults += 1
        add_reason(self.reasons, kind, reason or kind.value)
        if self.on_fault is not None:
            self.on_fault(self, kind, reason, request_id)


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
    """The answers one match step waits for: one object for all its seats, not one per seat.

    A step made with ``notify`` (the driver's way) calls it once every seat has answered, from
    the delivering code itself: no future, no task wake-up. Without it, a step keeps a future
    that :meth:`wake` resolves, for a caller that awaits it.
    """

    __slots__ = ("_loop", "future", "missing", "notify", "results")

    def __init__(
        self, notify: Callable[[], None] | None = None, loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        self._loop = loop or asyncio.get_running_loop()
        self.notify = notify
        """Called (once the asking is over) when the last expected seat answers."""
        self.future: asyncio.Future[None] | None = None if notify is not None else self._loop.create_future()
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
        if self.notify is not None:
            self.notify()
        elif self.future is not None and not self.future.done():
            self.future.set_result(None)

    def rearm(self) -> None:
        """A fresh future for the next wait."""
        if self.future is not None and self.future.done():
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

    def push_fault(self, notice: FaultNotice) -> None: ...

    def close(self, reason: str) -> None: ...


class Defaulted(Exception):
    """A request that the referee answers with the default action (the fault is counted already)."""


_request_ids = itertools.count(1)
"""Request ids, one sequence for the process: no two links' requests share an id."""


class EntrantLink:
    """One entrant's seats, its current connection, and its pending requests."""

    def __init__(self, entrant: str, token: str, connect_deadline: float) -> None:
        self.entrant = entrant
        self.token = token
        self.connect_deadline = connect_deadline
        """Loop time after which a seat whose bot never connected is defaulted."""
        self.outbox: Outbox | None = None
        self.ever_connected = False
        self.lost: FaultKind | None = None
        self.seats: dict[tuple[str, int], SeatStats] = {}
        self.playing = 0
        """Seats of :attr:`seats` not finished (:meth:`finish` is what finishes one): :attr:`live`
        without a scan of every seat, which made finishing the matches of a link quadratic."""
        self.games: dict[tuple[str, int], GameInfo] = {}
        self.pending: dict[int, Request] = {}
        self.expired: set[int] = set()
        """Requests that timed out: a late answer to one is ignored (the timeout is its fault)."""
        self.recent: OrderedDict[int, tuple[str, int]] = OrderedDict()
        """Request id → (match, seat) of the latest answered or expired requests, oldest first."""
        self.strays = 0
        """Messages of the current connection that concerned none of its seats."""
        self._waiters: set[asyncio.Future[None]] | None = None
        """The matches waiting for the first attach, one future each, all resolved at the first
        attach or when the connect window ends (``None``: no match has waited yet)."""
        self._window_open = True
        self.standing: StandingLink | None = None
        """The standing connection this link's seats are played over, if any (see :class:`StandingLink`)."""

    # -- the transport side ---------------------------------------------------------------

    def attach(self, outbox: Outbox) -> list[tuple[str, int]]:
        """A bot connected with this link's token; returns its seats. Replays live games."""
        if self.outbox is not None:
            raise PermissionError(f"entrant {self.entrant!r} is already connected")
        self.outbox = outbox
        self.ever_connected = True
        self.lost = None
        self.strays = 0
        self._window_over()
        for key, info in self.games.items():
            if not self.seats[key].finished:
                outbox.push_start(info)
        return sorted(self.seats)

    def detach(self, kind: FaultKind, reason: str = "") -> None:
        """The connection ended (``CRASH``, ``DISCONNECT`` or ``PROTOCOL``); fail what is pending.

        Every live seat of the link is charged once: the connection was all of theirs.
        """
        if self.outbox is None:
            return
        self.outbox = None
        self.lost = kind
        live = [stats for stats in self.seats.values() if not stats.finished]
        for stats in live:
            stats.fault(kind, reason)
        pending, self.pending = self.pending, {}
        for request in pending.values():
            self._remember(request)
            request.step.deliver(request.seat, Defaulted(kind.value))

    def answer(self, request_id: int, action: Action) -> bool:
        """A bot's reply; ``False`` if nothing with that id is pending (see :meth:`_unexpected`)."""
        request = self.pending.pop(request_id, None)
        if request is None or not request.step.deliver(request.seat, action):
            self._unexpected(request_id)
            return False
        self._remember(request)
        return True

    def reject(self, request_id: int, kind: FaultKind, reason: str = "") -> None:
        """A reply that holds no usable action: default it now, with a fault of ``kind``."""
        request = self.pending.pop(request_id, None)
        if request is None or request.seat not in request.step.missing:
            self._unexpected(request_id)
            return
        self._remember(request)
        # Charged before the delivery: the last answer of a step plays the match on at once.
        self.seats[(request.match_id, request.seat)].fault(kind, reason, request_id)
        request.step.deliver(request.seat, Defaulted(kind.value))

    def _remember(self, request: Request) -> None:
        self.recent[request.id] = (request.match_id, request.seat)
        if len(self.recent) > RECENT_IDS:
            # An OrderedDict: a plain dict's oldest key is found by skipping the slots of every
            # key deleted before it, which made this the link's costliest line under load.
            oldest, _ = self.recent.popitem(last=False)
            self.expired.discard(oldest)  # bounded too: a standing link lives for days

    def _unexpected(self, request_id: int) -> None:
        """A reply to no pending request of this link: charged to the seat it names, if any.

        A late answer to a request that timed out is ignored once (the timeout is its fault). A
        second answer to one of this link's requests is a protocol fault of that request's seat
        only. An id this link was never sent can affect none of its matches: it is charged to no
        seat, but told to the bot and counted as a stray (see :meth:`stray`).
        """
        if request_id in self.expired:
            self.expired.discard(request_id)
            return
        key = self.recent.get(request_id)
        stats = self.seats.get(key) if key is not None else None
        if stats is None:
            self.stray(f"a reply to request {request_id}, which this connection was not sent", request_id)
        elif not stats.finished:
            stats.fault(FaultKind.PROTOCOL, "a second answer to the same request", request_id)

    def stray(self, reason: str, request_id: int = 0) -> None:
        """A message that concerns none of this link's seats: told to the bot, charged to no seat.

        Past :data:`MAX_STRAYS` of them the connection is a flood: the transport closes it (see
        :attr:`flooded`), which charges every live seat once, as any broken connection does.
        """
        self.strays += 1
        if self.outbox is not None:
            self.outbox.push_fault(FaultNotice(FaultKind.PROTOCOL, "", -1, request_id, reason))

    @property
    def flooded(self) -> bool:
        """Whether the connection sent more stray messages than :data:`MAX_STRAYS`."""
        return self.strays > MAX_STRAYS

    def notify(self, notice: FaultNotice) -> None:
        """Tell the connected bot of a fault of one of its seats (nothing when it is not connected)."""
        if self.outbox is not None:
            self.outbox.push_fault(notice)

    @property
    def live(self) -> bool:
        """Whether any seat of this link is still playing."""
        return self.playing > 0

    @property
    def connected(self) -> bool:
        """Whether a connection is attached now."""
        return self.outbox is not None

    # -- the driver side ------------------------------------------------------------------

    def register(self, info: GameInfo, stats: SeatStats) -> None:
        """A seat of a new match belongs to this link."""
        key = (info.match_id, info.seat)
        old = self.seats.get(key)
        if old is not None and not old.finished:
            self.playing -= 1
        self.seats[key] = stats
        if not stats.finished:
            self.playing += 1
        self.games[key] = info
        if self.outbox is not None:
            self.outbox.push_start(info)

    async def wait_attached(self) -> bool:
        """Wait for a first connection until the connect deadline; ``True`` once connected.

        The link keeps one timer for all its matches, not a task and a timer each: a
        CreateMatches of thousands of matches stays cheap for the event loop. Each waiting match
        has a future of its own in a set, so that cancelling one (a referee shutting down cancels
        them all) takes it out at once: thousands of matches shielding one shared future made
        every cancellation scan that future's callbacks, quadratic in the matches (10.2 s to stop
        a referee holding 12,000 of them, on a slow machine; 2.7 s since).
        """
        if self.outbox is not None:
            return True
        if self.ever_connected or not self._window_open:
            return False
        loop = asyncio.get_running_loop()
        if self.connect_deadline <= loop.time():
            return False
        if self._waiters is None:
            self._waiters = set()
            loop.call_at(self.connect_deadline, self._window_over)
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.add(waiter)
        try:
            await waiter
        finally:
            self._waiters.discard(waiter)
        # Not `self.outbox is not None`: mypy still holds it narrowed to None from the test above
        # (the await does not undo that), and compiled code would check it is.
        return self.connected

    def _window_over(self) -> None:
        """The first attach, or the end of the connect window: every waiting match goes on."""
        self._window_open = False
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

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
        step.missing.add(seat)  # step.expect(seat)
        outbox = self.outbox
        if outbox is None:
            step.deliver(seat, Defaulted("no connection"))
            return 0
        request_id = next(_request_ids)
        request = Request(request_id, match_id, seat, decision, view, deadline_ms, bank_ms, step)
        self.pending[request_id] = request
        outbox.push_request(request)
        return request_id

    def forget(self, request_id: int) -> None:
        """Drop a request that timed out; a late answer to it is ignored."""
        request = self.pending.pop(request_id, None)
        if request is not None:
            self.expired.add(request_id)
            self._remember(request)

    def publish(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        """Public events of one of this link's matches."""
        if self.outbox is not None:
            self.outbox.push_events(match_id, step, events)

    def finish(self, match_id: str, seat: int, outcome: Outcome) -> None:
        """A seat's game is over."""
        key = (match_id, seat)
        stats = self.seats[key]
        if not stats.finished:
            stats.finished = True
            self.playing -= 1
        if self.outbox is not None:
            self.outbox.push_over(match_id, seat, outcome)
        if not self.live and self.outbox is not None:
            self.outbox.close("all games over")


class StandingLink:
    """A bot connection that outlives its matches: links of new matches join it over time.

    The admin opens one (``OpenStanding``) and gets a token; a bot connects with it once and
    stays connected. Each ``CreateMatches`` that names it makes an ordinary :class:`EntrantLink`
    for that call's seats (its entrant name, seats, pending requests and faults are that call's
    alone) and joins it here: the link's pushes go out on the standing connection (through a
    :class:`_Relay`), and when the link's games are over it leaves, without a goodbye. Replies
    are routed to the link that sent the request. A broken connection detaches every joined
    link (each charges its live seats, as any broken connection does); the token stays valid,
    so the bot may reconnect. ``close`` (``CloseStanding``) ends it: the connection says goodbye
    once no joined link has a game left.
    """

    def __init__(self, name: str, token: str) -> None:
        self.entrant = name
        self.token = token
        self.outbox: Outbox | None = None
        self.ever_connected = False
        self.joined: list[EntrantLink] = []
        self.closing: str | None = None
        """The goodbye reason once closed; ``None`` while the token is open."""
        self.strays = 0

    # -- the referee's side ---------------------------------------------------------------

    def join(self, link: EntrantLink) -> None:
        """``link``'s seats are played over this connection (now, if a bot is connected)."""
        link.standing = self
        self.joined.append(link)
        if self.outbox is not None:
            link.attach(_Relay(self, link))

    def leave(self, link: EntrantLink) -> None:
        """``link``'s games are over: it no longer uses the connection (no goodbye is sent)."""
        if link in self.joined:
            self.joined.remove(link)
        link.outbox = None
        if self.closing is not None and not self.live and self.outbox is not None:
            self.outbox.close(self.closing)

    def close(self, reason: str = "released") -> None:
        """Release the token: goodbye now when no game is left, else once the last one ends."""
        if self.closing is None:
            self.closing = reason or "released"
        if not self.live and self.outbox is not None:
            self.outbox.close(self.closing)

    @property
    def open(self) -> bool:
        """Whether a bot may connect with the token: not closed, or closed with games left."""
        return self.closing is None or self.live

    # -- the transport side (as :class:`EntrantLink`) -------------------------------------

    def attach(self, outbox: Outbox) -> list[tuple[str, int]]:
        """A bot connected with the standing token; returns the seats of every joined link."""
        if self.outbox is not None:
            raise PermissionError(f"standing entrant {self.entrant!r} is already connected")
        self.outbox = outbox
        self.ever_connected = True
        self.strays = 0
        seats: list[tuple[str, int]] = []
        for link in self.joined:
            seats += link.attach(_Relay(self, link))
        return sorted(seats)

    def detach(self, kind: FaultKind, reason: str = "") -> None:
        """The connection ended: every joined link detaches (its live seats charged once)."""
        if self.outbox is None:
            return
        self.outbox = None
        for link in list(self.joined):
            link.detach(kind, reason)

    def _owner(self, request_id: int) -> EntrantLink | None:
        for link in self.joined:
            if request_id in link.pending:
                return link
        for link in self.joined:
            if request_id in link.recent or request_id in link.expired:
                return link
        return None

    def answer(self, request_id: int, action: Action) -> bool:
        """A bot's reply, to the joined link that sent the request (else a stray)."""
        link = self._owner(request_id)
        if link is None:
            self.stray(f"a reply to request {request_id}, which this connection was not sent", request_id)
            return False
        return link.answer(request_id, action)

    def reject(self, request_id: int, kind: FaultKind, reason: str = "") -> None:
        """A reply with no usable action, to the joined link that sent the request."""
        link = self._owner(request_id)
        if link is None:
            self.stray(f"a reply to request {request_id}, which this connection was not sent", request_id)
            return
        link.reject(request_id, kind, reason)

    def stray(self, reason: str, request_id: int = 0) -> None:
        """A message that concerns none of the joined links' seats (see :meth:`EntrantLink.stray`)."""
        self.strays += 1
        if self.outbox is not None:
            self.outbox.push_fault(FaultNotice(FaultKind.PROTOCOL, "", -1, request_id, reason))

    @property
    def flooded(self) -> bool:
        """Whether the connection sent more stray messages than :data:`MAX_STRAYS`."""
        return self.strays + sum(link.strays for link in self.joined) > MAX_STRAYS

    @property
    def live(self) -> bool:
        """Whether a joined link still has a game to play."""
        return any(link.live for link in self.joined)


class _Relay:
    """The outbox of a link joined to a standing connection: pushes go out on that connection;
    closing (the link's games are over) only leaves it."""

    __slots__ = ("link", "standing")

    def __init__(self, standing: StandingLink, link: EntrantLink) -> None:
        self.standing = standing
        self.link = link

    def push_start(self, info: GameInfo) -> None:
        if self.standing.outbox is not None:
            self.standing.outbox.push_start(info)

    def push_request(self, request: Request) -> None:
        if self.standing.outbox is not None:
            self.standing.outbox.push_request(request)

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        if self.standing.outbox is not None:
            self.standing.outbox.push_events(match_id, step, events)

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None:
        if self.standing.outbox is not None:
            self.standing.outbox.push_over(match_id, seat, outcome)

    def push_fault(self, notice: FaultNotice) -> None:
        if self.standing.outbox is not None:
            self.standing.outbox.push_fault(notice)

    def close(self, reason: str) -> None:
        self.standing.leave(self.link)
