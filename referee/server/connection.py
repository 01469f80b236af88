"""One bot connection's outbox: everything for it since the last flush goes out as one Update."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from referee import wire
from referee.driver.links import EntrantLink, GameInfo, Request, StandingLink
from referee.faults import FaultKind, FaultNotice, bounded
from referee.rules.core import Event, Outcome
from sixnimmt.v1 import game_pb2, referee_pb2


def deliver_replies(link: EntrantLink | StandingLink, replies: Sequence[game_pb2.DecisionReply]) -> None:
    """Hand a ``DecisionBatch``'s replies to the link, in order: each a bot's answer to one of its
    requests, or an error it reports (defaulted, an ``exception`` fault), or an action that does
    not decode (an ``illegal`` fault). Every match a reply completes a step of plays on inside it."""
    answer = link.answer
    for reply in replies:
        if reply.error:
            link.reject(reply.id, FaultKind.EXCEPTION, bounded(reply.error))
            continue
        given = reply.action
        # The common case, read here: a number other than 0 is one that is set (reading it
        # first spares most replies the oneof's look-up).
        number = given.number
        if number or given.WhichOneof("value") == "number":
            answer(reply.id, number)
            continue
        try:
            action = wire.action_from_wire(given)
        except wire.WireError as exc:
            link.reject(reply.id, FaultKind.ILLEGAL, str(exc))
            continue
        answer(reply.id, action)


_TAKE = object()
"""In a connection's queue: the Update being buffered is ready to be taken (:meth:`Connection.take`)."""


class Connection:
    """Buffers pushes into one ``Update``, taken by the stream's writer when it gets to it.

    The first push after a take queues a mark; the writer, woken by it on the next turn of the
    event loop, takes everything buffered until then as one Update. A match plays on inside the
    delivery of its step's last answer (:class:`referee.driver.links.Step`), so every match woken
    by the replies read in this turn pushes its next request into the same Update: that is the
    batching that lets one stream carry many matches. While the writer waits for the transport
    (flow control), the buffer keeps growing into one larger Update.

    The Update is assembled as bytes (``RefereeMessage{update}`` as protobuf writes it): each
    request encoded by :func:`referee.wire.request_bytes` (a step's table once for all its seats),
    each step's events once for every connection of the match. The stream sends them as they are.
    """

    def __init__(self, *, events: bool = True, table_once: bool = False) -> None:
        self.events = events
        """Whether the bot takes public events (``Hello.events``, unset: true): else none are sent."""
        self.table_once = table_once
        """``Hello.table_once``: a step's table goes once per Update, not once per seat."""
        self._tables: dict[str, tuple[object, int]] = {}
        """match id → (the step, the id of its request in this Update that holds the table)."""
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        """Marks (take the buffer), sealed messages (the last Update, the goodbye), ``None`` (end)."""
        self._starts: list[bytes] = []
        self._events: list[bytes] = []
        self._requests: list[bytes] = []
        self._overs: list[bytes] = []
        self._faults: list[bytes] = []
        self._dirty = False
        self._closed = False
        self.requests_sent = 0
        self.variants: dict[str, str] = {}
        """match id → variant name, learned from the game starts."""
        self._writers: dict[str, wire.RequestWriter] = {}
        """match id → the writer of its requests (its codec and encoded id looked up once)."""

    def _touch(self) -> None:
        if not self._dirty and not self._closed:
            self._dirty = True
            self.queue.put_nowait(_TAKE)

    def take(self) -> bytes | None:
        """The Update buffered since the last take, as the bytes of its ``RefereeMessage``
        (``None`` if nothing, or closed)."""
        if not self._dirty or self._closed:
            return None
        self._dirty = False
        message = wire.update_bytes(self._starts, self._events, self._requests, self._overs, self._faults)
        self._starts, self._events, self._requests, self._overs, self._faults = [], [], [], [], []
        self._tables.clear()
        return message

    async def next_message(self) -> bytes | referee_pb2.RefereeMessage | None:
        """The next message to send on the stream (an Update as its bytes, the goodbye as a
        message); ``None`` when the stream is over."""
        while True:
            item = await self.queue.get()
            if item is _TAKE:
                message = self.take()
                if message is None:
                    continue  # sealed by close() meanwhile: it is further on in the queue
                return message
            assert item is None or isinstance(item, (bytes, referee_pb2.RefereeMessage))
            return item

    def push_start(self, info: GameInfo) -> None:
        self.variants[info.match_id] = info.variant
        if info.match_id not in self._writers:
            self._writers[info.match_id] = wire.RequestWriter(info.match_id, info.variant)
        self._starts.append(
            wire.start_bytes(
                info.match_id, info.seat, info.variant, info.config, info.seat_seed, info.seat_names
            )
        )
        self._touch()

    def push_request(self, request: Request) -> None:
        table_from = 0
        if self.table_once:
            first = self._tables.get(request.match_id)
            if first is not None and first[0] is request.step:
                table_from = first[1]
            else:
                self._tables[request.match_id] = (request.step, request.id)
        write = self._writers.get(request.match_id)
        if write is None:  # a request of a match whose start this connection was not told
            write = self._writers[request.match_id] = wire.RequestWriter(
                request.match_id, self.variants[request.match_id]
            )
        r = request
        self._requests.append(write(r.id, r.decision, r.view, r.deadline_ms, r.bank_ms, table_from))
        self.requests_sent += 1
        if not self._dirty:
            self._touch()

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        if not self.events:
            return  # not even converted: a match none of whose bots subscribe converts none
        self._events += wire.events_bytes(self.variants[match_id], match_id, step, events)
        self._touch()

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None:
        # Nothing of the match follows its over: a standing connection must not keep every id.
        self.variants.pop(match_id, None)
        self._writers.pop(match_id, None)
        self._overs.append(wire.over_bytes(match_id, seat, outcome))
        self._touch()

    def push_fault(self, notice: FaultNotice) -> None:
        fault = referee_pb2.FaultNotice()
        wire.fault_notice_to_wire(notice, fault)
        self._faults.append(fault.SerializeToString())
        self._touch()

    def close(self, reason: str) -> None:
        """Send what is buffered, say goodbye and end the stream."""
        if self._closed:
            return
        last = self.take()
        self._closed = True
        if last is not None:
            self.queue.put_nowait(last)
        goodbye = referee_pb2.RefereeMessage()
        goodbye.goodbye.reason = reason
        self.queue.put_nowait(goodbye)
        self.queue.put_nowait(None)
