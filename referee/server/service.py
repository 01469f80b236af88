"""The Referee servicer: thin handlers that convert, call the state, and map errors in one place."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from referee import wire
from referee.driver import EntrantLink, FaultPolicy, StandingLink, TimeControl
from referee.faults import FaultKind, bounded
from referee.rules.errors import RulesError
from referee.server import metrics
from referee.server.admission import Admission, Flooded, Limits, Refused, Ticket
from referee.server.connection import Connection, deliver_replies
from referee.server.remote import (
    KeyLimitError,
    KeysNotLoadedError,
    RemoteError,
    RemoteHub,
    RemoteKey,
    RemoteOfflineError,
    is_key,
)
from referee.server.results import finished_events
from referee.server.state import (
    MatchRequest,
    RefereeState,
    UnknownMatchError,
    UnknownTokenError,
    parse_config,
)
from referee.settings import Settings
from sixnimmt.v1 import game_pb2, referee_pb2, referee_pb2_grpc

log = logging.getLogger(__name__)

FLOOD_MARGIN = 256
"""Replies (or empty messages) a bot may send beyond the requests it got before it is a flood."""
EOF_GRACE_S = 0.25
"""How long a stream that ended without Goodbye waits for gRPC to report a broken connection.

A dead process (or a message gRPC refuses) ends the bot's messages first and cancels the call a
moment later; only a stream still alive after this is a bot that closed it: a disconnect.
"""

T = TypeVar("T")

ADMIN_ONLY = "admin calls need the admin token (metadata 'authorization: Bearer <token>')"

_STATUS: list[tuple[type[BaseException], grpc.StatusCode]] = [
    (UnknownMatchError, grpc.StatusCode.NOT_FOUND),
    (UnknownTokenError, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionError, grpc.StatusCode.PERMISSION_DENIED),
    (KeysNotLoadedError, grpc.StatusCode.UNAVAILABLE),
    (KeyLimitError, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (RemoteOfflineError, grpc.StatusCode.FAILED_PRECONDITION),
    (RulesError, grpc.StatusCode.INVALID_ARGUMENT),
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT),
]
"""Domain errors → status codes, in one place; anything else is INTERNAL."""


def status_of(exc: BaseException) -> grpc.StatusCode:
    """The status code for a domain error."""
    for kind, code in _STATUS:
        if isinstance(exc, kind):
            return code
    return grpc.StatusCode.INTERNAL


def maps_errors(handler: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Abort the call with the mapped status code when a unary handler raises a domain error."""

    @wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> T:
        if not self.is_admin(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, ADMIN_ONLY)
        try:
            return await handler(self, request, context)
        except (UnknownMatchError, PermissionError, RulesError, ValueError, RemoteError) as exc:
            await context.abort(status_of(exc), str(exc))
            raise  # unreachable: abort raises

    return wrapper


class RefereeService(referee_pb2_grpc.RefereeServicer):
    """The gRPC face of :class:`RefereeState`."""

    def __init__(self, state: RefereeState, settings: Settings, admin_token: str) -> None:
        self.state = state
        self.settings = settings
        self._admin = f"Bearer {admin_token}"
        self.streams = 0
        """Bot streams being served (``Play`` calls)."""
        self.admission = Admission(Limits.of(settings))
        """Who may wait for their Hello, how many and how often (:mod:`referee.server.admission`)."""
        self.remote = RemoteHub(state)
        """Remote bots: API keys and the standing connections they opened (docs/remote.md)."""

    def is_admin(self, context: grpc.aio.ServicerContext) -> bool:
        """Whether the call carries the admin token (bots get only their entrant tokens)."""
        metadata = dict(context.invocation_metadata() or ())
        return hmac.compare_digest(str(metadata.get("authorization", "")), self._admin)

    # -- admin ----------------------------------------------------------------------------

    @maps_errors
    async def CreateMatches(
        self, request: referee_pb2.CreateMatchesRequest, context: grpc.aio.ServicerContext
    ) -> referee_pb2.CreateMatchesResponse:
        s = self.settings
        tc = request.time_control
        time_control = TimeControl(
            decision_ms=tc.decision_ms or s.decision_ms,
            bank_ms=tc.bank_ms if request.HasField("time_control") else s.bank_ms,
            connect_ms=tc.connect_ms or s.connect_ms,
        )
        fp = request.fault_policy
        policy = FaultPolicy(max_faults=fp.max_faults or s.max_faults, send_events=not fp.omit_events)
        specs = await asyncio.to_thread(match_requests, request)
        remote = dict(request.remote)
        needs = {e: sum(e in m.entrants for m in request.matches) for e in remote}
        standing = {**request.standing, **self.remote.place(remote, needs, request.remote_wait)}
        try:
            ids, links = await self.state.create(specs, time_control, policy, request.seat_seed_key, standing)
        finally:
            self.remote.placed()
        response = referee_pb2.CreateMatchesResponse(match_ids=ids)
        for link in links:
            if link.entrant in remote:
                continue  # its bot is connected (or awaited) with its account's key: no token
            given = link.standing.token if link.standing is not None else link.token
            token = response.tokens.add(entrant=link.entrant, token=given)
            for match_id, seat in sorted(link.seats):
                token.seats.add(match_id=match_id, seat=seat)
        return response

    @maps_errors
    async def OpenStanding(
        self, request: referee_pb2.OpenStandingRequest, context: grpc.aio.ServicerContext
    ) -> referee_pb2.OpenStandingResponse:
        standing = self.state.open_standing(request.name[:200])
        return referee_pb2.OpenStandingResponse(token=standing.token)

    @maps_errors
    async def CloseStanding(
        self, request: referee_pb2.CloseStandingRequest, context: grpc.aio.ServicerContext
    ) -> referee_pb2.CloseStandingResponse:
        closed = self.state.close_standing(list(request.tokens), bounded(request.reason, 200))
        return referee_pb2.CloseStandingResponse(closed=closed)

    @maps_errors
    async def SetRemoteKeys(
        self, request: referee_pb2.SetRemoteKeysRequest, context: grpc.aio.ServicerContext
    ) -> referee_pb2.SetRemoteKeysResponse:
        keys = [
            RemoteKey(k.key_id, k.account, k.sha256.lower(), k.max_connections, k.max_matches)
            for k in request.keys
        ]
        closed = self.remote.set_keys(keys, request.generation)
        return referee_pb2.SetRemoteKeysResponse(
            keys=len(self.remote.keys or {}),
            closed=closed or 0,
            generation=self.remote.generation,
            stale=closed is None,
        )

    @maps_errors
    async def GetRemoteStatus(
        self, request: referee_pb2.GetRemoteStatusRequest, context: grpc.aio.ServicerContext
    ) -> referee_pb2.GetRemoteStatusResponse:
        response = referee_pb2.GetRemoteStatusResponse(keys_loaded=self.remote.keys is not None)
        for row in self.remote.status(request.accounts):
            response.accounts.add(**row)
        return response

    @maps_errors
    async def GetResult(
        self, request: referee_pb2.GetResultRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.MatchResult:
        return await self._result(request.match_id, request.wait)

    async def GetResults(
        self, request: referee_pb2.GetResultsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[game_pb2.MatchResult]:
        """Each named match's result in the order given, on one stream; with ``wait``, each once
        that match has finished. An id with no match ends the stream with ``NOT_FOUND`` after the
        results before it."""
        if not self.is_admin(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, ADMIN_ONLY)
        for match_id in request.match_ids:
            try:
                result = await self._result(match_id, request.wait)
            except UnknownMatchError as exc:
                await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            yield result

    async def _result(self, match_id: str, wait: bool) -> game_pb2.MatchResult:
        """A match's result (:meth:`RefereeState.result`); with ``wait``, once it is over."""
        entry = self.state.matches.get(match_id)
        if entry is not None and wait:
            await entry.done.wait()
        return self.state.result(match_id)

    async def WatchMatch(
        self, request: referee_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[game_pb2.MatchEvent]:
        if not self.is_admin(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, ADMIN_ONLY)
        entry = self.state.matches.get(request.match_id)
        if entry is None:  # over: its events replayed from its kept transcript
            try:
                result = self.state.result(request.match_id)
            except UnknownMatchError as exc:
                await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            for step, events in finished_events(result):
                holder = referee_pb2.Update()
                wire.events_to_wire(result.variant, request.match_id, step, events, holder.events)
                for event in holder.events:
                    yield event
            return
        driver = entry.driver
        queue: asyncio.Queue[tuple[int, Any] | None] = asyncio.Queue()
        for item in driver.history:
            queue.put_nowait(item)

        def listen(step: int, events: Any) -> None:
            queue.put_nowait((step, events))

        driver.listeners.append(listen)
        done = asyncio.ensure_future(entry.done.wait())
        done.add_done_callback(lambda _: queue.put_nowait(None))
        if entry.done.is_set():
            queue.put_nowait(None)
        try:
            while (item := await queue.get()) is not None:
                step, events = item
                holder = referee_pb2.Update()
                wire.events_to_wire(driver.variant.name, request.match_id, step, events, holder.events)
                for event in holder.events:
                    yield event
        finally:
            driver.listeners.remove(listen)
            done.cancel()

    # -- the bot stream -------------------------------------------------------------------

    async def Play(
        self,
        request_iterator: AsyncIterator[referee_pb2.BotMessage],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[referee_pb2.RefereeMessage | bytes]:
        """A bot's stream. Updates are sent as the bytes the connection assembled
        (:func:`referee.server.app.play_reply_bytes`), the other messages as messages."""
        s = self.settings
        # Caps before anything is read: a stream over them costs the referee nothing more.
        if self.streams >= s.max_streams:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, f"the referee serves {s.max_streams} streams"
            )
        named = _metadata_token(context)
        ticket = await self._admit(named, context)
        self.streams += 1
        try:
            first = await self._first_message(request_iterator, ticket, context)
            if first.ByteSize() > s.max_hello_bytes:
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED, f"a Hello holds at most {s.max_hello_bytes} bytes"
                )
            if first.WhichOneof("kind") != "hello":
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
            if named and not hmac.compare_digest(first.hello.token.encode(), named.encode()):
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"the Hello's token is not the one the call's {wire.TOKEN_METADATA} metadata names",
                )
            async for message in self._play(first.hello, request_iterator, context):
                yield message
        finally:
            self.streams -= 1
            ticket.leave()

    async def _admit(self, named: str, context: grpc.aio.ServicerContext) -> Ticket:
        """The stream's place among those waiting for their Hello, or the call ends here.

        A token named in the metadata is checked now: unknown, the stream is refused and holds
        nothing; over its own limits, refused and charged to its own seats. Without one the stream
        waits in its transport's pool (docs/protocol.md, "Admission").
        """
        if not named:
            try:
                return self.admission.anonymous(context.peer())
            except Refused as exc:
                metrics.STREAMS_REFUSED.labels("peer_rate").inc()
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        links: list[EntrantLink | StandingLink]
        try:
            if is_key(named):
                key = self.remote.known(named)
                credential, links = f"key:{key.key_id}", list(self.remote.standings(key.key_id))
            else:
                link = self.state.link(named)
                credential, links = f"token:{named}", [link]
        except UnknownTokenError as exc:
            metrics.STREAMS_REFUSED.labels("unknown_token").inc()
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(exc))
        except RemoteError as exc:
            await context.abort(status_of(exc), str(exc))
        try:
            return self.admission.named(credential)
        except Flooded as exc:
            metrics.STREAMS_REFUSED.labels("token_limit").inc()
            if exc.charge:
                charge_flood(links, exc.reason)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.reason)
        raise AssertionError("unreachable: abort raises")

    async def _first_message(
        self,
        request_iterator: AsyncIterator[referee_pb2.BotMessage],
        ticket: Ticket,
        context: grpc.aio.ServicerContext,
    ) -> referee_pb2.BotMessage:
        """The stream's first message, within the Hello's time, unless a full pool closes it first."""
        s = self.settings
        reading = asyncio.ensure_future(anext(request_iterator))
        reading.add_done_callback(_retrieved)  # it may end (the stream closed) after the call did
        try:
            waits: tuple[asyncio.Future[Any], ...] = (
                (reading,) if ticket.evicted is None else (reading, ticket.evicted)
            )
            await asyncio.wait(waits, timeout=s.hello_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
            ticket.leave()
            if reading.done():
                try:
                    return reading.result()  # a broken stream's error ends the call, as it would unread
                except StopAsyncIteration:
                    pass  # the stream ended before any message
            elif ticket.evicted is not None and ticket.evicted.done():
                metrics.STREAMS_REFUSED.labels("room").inc()
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, ticket.evicted.result())
            metrics.STREAMS_REFUSED.labels("no_hello").inc()
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"send Hello first, within {s.hello_ms} ms"
            )
        finally:
            if not reading.done():
                reading.cancel()
        raise AssertionError("unreachable: abort raises")

    async def _play(
        self,
        hello: referee_pb2.Hello,
        request_iterator: AsyncIterator[referee_pb2.BotMessage],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[referee_pb2.RefereeMessage | bytes]:
        if hello.protocol != wire.PROTOCOL_VERSION:
            # 0 is proto3's unset: a bot that names no version is refused like any other, so that
            # no client is pinned by accident to whatever version a referee speaks.
            said = "0 (not set)" if hello.protocol == 0 else str(hello.protocol)
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Hello.protocol {said} is not supported: this referee speaks protocol"
                f" {wire.PROTOCOL_VERSION}; set Hello.protocol = {wire.PROTOCOL_VERSION}",
            )
        try:
            link = self.remote.admit(hello.token) if is_key(hello.token) else self.state.link(hello.token)
        except UnknownTokenError as exc:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(exc))
        except RemoteError as exc:
            await context.abort(status_of(exc), str(exc))
        connection = Connection(
            events=hello.events if hello.HasField("events") else True, table_once=hello.table_once
        )
        welcome = referee_pb2.RefereeMessage()
        welcome.welcome.protocol = wire.PROTOCOL_VERSION
        try:
            seats = link.attach(connection)
        except PermissionError as exc:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(exc))
        for match_id, seat in seats:
            welcome.welcome.seats.add(match_id=match_id, seat=seat)
        reader = asyncio.create_task(self._read(request_iterator, link, connection))
        metrics.BOT_CONNECTIONS.inc()
        ended = FaultKind.CRASH
        try:
            yield welcome
            while (message := await connection.next_message()) is not None:
                yield message
            ended = FaultKind.DISCONNECT
        finally:
            metrics.BOT_CONNECTIONS.dec()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            if link.outbox is connection:
                verdict = reader_fault(reader)
                if verdict is not None:
                    link.detach(*verdict)
                elif ended is FaultKind.CRASH:
                    link.detach(
                        FaultKind.CRASH, "the connection broke (the process died or the stream failed)"
                    )
                else:
                    link.detach(FaultKind.DISCONNECT, "the stream ended")
            self.remote.released(link)
            self.state.release(link)

    async def _read(
        self,
        request_iterator: AsyncIterator[referee_pb2.BotMessage],
        link: EntrantLink | StandingLink,
        connection: Connection,
    ) -> tuple[FaultKind, str] | None:
        """Take the bot's replies until it stops; return why it stopped (``None``: cleanly)."""
        received = 0
        try:
            async for message in request_iterator:
                # Replies are counted, not messages (one without replies counts as one): a bot
                # may split its answers over as many messages as it likes.
                received += max(1, len(message.decisions.replies))
                if received > connection.requests_sent + FLOOD_MARGIN:
                    return self._drop(
                        link, connection, FaultKind.PROTOCOL, "flood: more replies than requests"
                    )
                kind = message.WhichOneof("kind")
                if kind == "decisions":
                    deliver_replies(link, message.decisions.replies)
                elif kind == "goodbye":
                    verdict = self._drop(
                        link,
                        connection,
                        FaultKind.DISCONNECT,
                        f"said goodbye ({bounded(message.goodbye.reason, 200)})",
                    )
                    return verdict if link.live else None
                else:
                    link.stray(f"an unexpected {kind or 'empty'} message")
                if link.flooded:
                    return self._drop(
                        link,
                        connection,
                        FaultKind.PROTOCOL,
                        "flood: too many messages that concern none of its seats",
                    )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke: an undecodable or oversized message, a reset
            fault, reason = _stream_failure(exc)
            return self._drop(link, connection, fault, reason)
        if link.live:
            await asyncio.sleep(EOF_GRACE_S)  # a broken connection cancels this task meanwhile
        verdict = self._drop(link, connection, FaultKind.DISCONNECT, "closed its stream while its games ran")
        return verdict if link.live else None

    @staticmethod
    def _drop(
        link: EntrantLink | StandingLink, connection: Connection, fault: FaultKind, reason: str
    ) -> tuple[FaultKind, str]:
        if link.outbox is connection:
            link.detach(fault, reason)
        connection.close(reason)
        return fault, reason


def _stream_failure(exc: BaseException) -> tuple[FaultKind, str]:
    """The fault and reason of a bot stream that failed with ``exc``."""
    if isinstance(exc, DecodeError):
        return FaultKind.PROTOCOL, "sent a message that does not decode"
    code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        return FaultKind.PROTOCOL, "sent a message over the size limit"
    return FaultKind.CRASH, bounded(f"the stream failed: {exc}", 300)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Take a finished task's exception, so that an abandoned read is not logged as unretrieved."""
    if not task.cancelled():
        task.exception()


def _metadata_token(context: grpc.aio.ServicerContext) -> str:
    """The token (or API key) the call's metadata names, ``""`` if none."""
    for key, value in context.invocation_metadata() or ():
        if key == wire.TOKEN_METADATA:
            return value if isinstance(value, str) else value.decode(errors="replace")
    return ""


def charge_flood(links: list[EntrantLink | StandingLink], reason: str) -> None:
    """Charge a flooding token's live seats a protocol fault each (its own seats: nobody else's)."""
    for link in links:
        for entrant in link.joined if isinstance(link, StandingLink) else [link]:
            for stats in list(entrant.seats.values()):
                if not stats.finished:
                    stats.fault(FaultKind.PROTOCOL, reason)


def match_requests(request: referee_pb2.CreateMatchesRequest) -> list[MatchRequest]:
    """The matches a CreateMatches asks for, configs parsed (run in a worker thread: it may be big).

    Each distinct config text is parsed once: matches with the same text share the config.
    """
    parsed: dict[str, dict[str, Any]] = {}
    matches = []
    for m in request.matches:
        text = m.config_json
        config = parsed.get(text)
        if config is None:
            config = parsed[text] = parse_config(text)
        matches.append(MatchRequest(m.variant, config, m.seed, tuple(m.entrants)))
    return matches


def reader_fault(reader: asyncio.Task[tuple[FaultKind, str] | None]) -> tuple[FaultKind, str] | None:
    """Why the reader ended, if it ended with a verdict."""
    if reader.done() and not reader.cancelled() and reader.exception() is None:
        return reader.result()
    return None
