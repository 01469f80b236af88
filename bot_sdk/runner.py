"""Run a bot against a referee: one stream, many matches, one bot object per (match, seat).

Matches may arrive at any time while the stream lives (a standing connection, which the league's
warm bots use, gets the matches of block after block): each start makes a fresh bot object, and
each game over drops it, so nothing of one match reaches another through the SDK.

The batching of the protocol is hidden here: the referee sends every pending decision of the
connection in one Update, the runner asks the right bot object for each and answers them all
in one DecisionBatch. A bot author only writes ``decide`` (or ``choose_card`` …).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import random
import signal
import sys
import threading
import time
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bot_sdk.bot import Bot, is_action
from referee import wire
from referee.faults import MAX_REASON_CHARS, FaultNotice, bounded
from referee.rules.core import Action, Event
from referee.settings import load as load_settings
from referee.settings import tune_gc
from sixnimmt.v1 import referee_pb2, referee_pb2_grpc

log = logging.getLogger(__name__)

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 1 << 20),
]


_SDK_DIR = str(Path(__file__).resolve().parent) + os.sep

KEEP_RESULTS = 1000
"""Game results a summary keeps; a warm bot process plays matches over days."""

PARTIAL_REPLY_S = 0.025
"""Answers computed for longer than this are sent before the rest of the batch is done."""


class RunnerError(RuntimeError):
    """The runner could not play: no referee address or token, or the referee refused."""


@dataclass(frozen=True, slots=True)
class Asked:
    """A decision request as the runner received it, for a bot object that wants more than the
    view: one with an ``on_asked(asked)`` method gets this just before its ``decide`` (a person's
    seat shows the clock, and answers the request by its id). Other bots are not told."""

    request_id: int
    match_id: str
    seat: int
    deadline_ms: int
    """Time to answer without touching the time bank."""
    time_bank_ms: int
    """What is left in the seat's time bank."""
    received: float
    """``time.monotonic()`` when the Update holding it was read."""
    seat_names: tuple[str, ...] = ()
    """The match's seat names, as its start told them."""


NO_REPLY: Any = object()
"""What a bot's ``decide`` returns to send no answer at all: the request then times out at the
referee (a person's seat whose page let the clock run out). Anything else that is not an action
is answered as one, which the referee faults as illegal at once."""


class Stopper:
    """Ends a :func:`run` from another thread: the runner says goodbye and closes its stream (the
    referee charges a seat whose games are still running a disconnect fault, as for any bot that
    leaves). A bot asleep in ``decide`` is not woken: its owner wakes it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._send: Callable[[referee_pb2.BotMessage | None], None] | None = None
        self._reason: str | None = None

    def stop(self, reason: str) -> None:
        """Say goodbye with ``reason`` (once; before the run has started, as soon as it starts)."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            send = self._send
        if send is not None:
            _goodbye(send, reason)

    @property
    def stopped(self) -> bool:
        return self._reason is not None

    def _bind(self, send: Callable[[referee_pb2.BotMessage | None], None]) -> None:
        with self._lock:
            self._send = send
            reason = self._reason
        if reason is not None:
            _goodbye(send, reason)


def _goodbye(send: Callable[[referee_pb2.BotMessage | None], None], reason: str) -> None:
    bye = referee_pb2.BotMessage()
    bye.goodbye.reason = reason
    send(bye)
    send(None)


@dataclass(slots=True)
class RunSummary:
    """What a bot process did over its connection."""

    games: int = 0
    decisions: int = 0
    errors: int = 0
    """Decisions where the bot raised or returned something that is not an action."""
    faults: list[FaultNotice] = field(default_factory=list)
    """The faults the referee told this connection of (the latest 100)."""
    goodbye: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)
    """The latest games' results (at most :data:`KEEP_RESULTS`: a standing connection plays on),
    each as :func:`_handle` passes it to ``on_over``."""
    playing: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    """(match, seat) → its game so far: variant, seat names, faults by kind (for its result)."""


def run(
    factory: Callable[[], Bot],
    *,
    referee: str | None = None,
    token: str | None = None,
    name: str = "bot",
    stopper: Stopper | None = None,
) -> RunSummary:
    """Connect, play every game the token holds, and return when the referee says goodbye.

    It runs on any thread (only the main thread's run takes SIGTERM as its goodbye); ``stopper``
    ends it from another.
    """
    settings = load_settings()
    address = referee or settings.referee
    token = token or settings.token
    if not address:
        raise RunnerError("no referee address: pass --referee or set SIXNIMMT_REFEREE")
    if not token:
        raise RunnerError("no token: pass --token or set SIXNIMMT_TOKEN")
    outgoing: queue.SimpleQueue[referee_pb2.BotMessage | None] = queue.SimpleQueue()
    hello = referee_pb2.BotMessage()
    hello.hello.token = token
    hello.hello.name = name
    hello.hello.protocol = wire.PROTOCOL_VERSION
    hello.hello.events = takes_events(factory, settings.bot_events)
    hello.hello.table_once = True
    outgoing.put(hello)

    def requests() -> Iterator[referee_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    def stop(signum: int, frame: Any) -> None:
        _goodbye(outgoing.put, f"signal {signum}")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        tune_gc(settings)  # the bot's code and the SDK are loaded: a process of its own from here on
    if stopper is not None:
        stopper._bind(outgoing.put)
    summary = RunSummary()
    bots: dict[tuple[str, int], Bot] = {}
    seats_of: dict[str, list[int]] = defaultdict(list)
    with grpc.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)
        try:
            # The token in the metadata too: the referee admits the stream within this token's own
            # limits before reading anything, so no other client's flood can keep it out.
            for message in stub.Play(requests(), metadata=token_metadata(token)):
                kind = message.WhichOneof("kind")
                if kind == "update":
                    _handle(message.update, factory, bots, seats_of, summary, outgoing.put)
                elif kind == "goodbye":
                    summary.goodbye = message.goodbye.reason
                    break
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
            raise RunnerError(f"referee ended the stream: {code} {details}") from exc
        finally:
            outgoing.put(None)
    return summary


def token_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The ``Play`` call's metadata naming ``token`` (none for a token no header can carry: the
    referee refuses that one at Hello as unknown, where a header would fail the call in gRPC)."""
    if token.isascii() and token.isprintable() and token == token.strip():
        return ((wire.TOKEN_METADATA, token),)
    return ()


def takes_events(factory: Callable[[], Bot], setting: str = "auto") -> bool:
    """Whether the bots ``factory`` makes take public events (``SIXNIMMT_BOT_EVENTS``): with
    ``auto``, when its class overrides :meth:`Bot.on_events` (a factory that is not a bot class
    takes them, as every bot did before bots could opt out)."""
    if setting != "auto":
        return setting == "all"
    if isinstance(factory, type) and issubclass(factory, Bot):
        return factory.on_events is not Bot.on_events
    return True


def _handle(
    update: referee_pb2.Update,
    factory: Callable[[], Bot],
    bots: dict[tuple[str, int], Bot],
    seats_of: dict[str, list[int]],
    summary: RunSummary,
    send: Callable[[referee_pb2.BotMessage], None],
    on_over: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """One Update: starts, events, requests (answered), fault notices, game overs.

    ``on_over`` gets each game that ended, as it is kept in ``summary.results``: ``match_id``,
    ``variant``, ``seat``, ``seats`` (the names by seat), ``scores``, ``ranks``, ``termination``
    and ``faults`` (this seat's, kind → count, as the referee told them on this connection).
    """
    for start in update.starts:
        key = (start.match_id, start.seat)
        if key in bots:
            continue  # a replayed start after a reconnect
        summary.playing.setdefault(
            key, {"variant": start.variant, "seats": list(start.seat_names), "faults": {}}
        )
        bot = factory()
        bot.seat = start.seat
        bot.rng = random.Random(start.seat_seed)
        with contextlib.suppress(wire.WireError):  # no codec: each of its requests says so
            wire.codec(start.variant)  # this game's codec only: a bot loads the variant it plays
        bot.on_start(start.seat, start.variant, json.loads(start.config_json or "{}"))
        bots[key] = bot
        seats_of[start.match_id].append(start.seat)
    if update.events:
        by_match: dict[str, list[Event]] = defaultdict(list)
        for message in update.events:
            by_match[message.match_id].append(wire.event_from_wire(message))
        for match_id, events in by_match.items():
            for seat in seats_of.get(match_id, ()):
                _call(bots[(match_id, seat)].on_events, events, summary)
    if update.requests:
        reply = referee_pb2.BotMessage()
        replies = reply.decisions.replies
        started = time.perf_counter()
        received = time.monotonic()
        views = wire.UpdateViews(update.requests)
        for request in update.requests:
            out = replies.add()
            out.id = request.id
            bot = bots.get((request.match_id, request.seat))
            action: Action | None = None
            if bot is not None:
                try:
                    asked = getattr(bot, "on_asked", None)
                    if asked is not None:
                        names = summary.playing.get((request.match_id, request.seat), {}).get("seats", ())
                        asked(
                            Asked(request.id, request.match_id, request.seat, request.deadline_ms,
                                  request.time_bank_ms, received, tuple(names))
                        )  # fmt: skip
                    action = bot.decide(views.view(request))
                except Exception as exc:
                    summary.errors += 1
                    traceback.print_exc(file=sys.stderr)
                    # The referee records it as the seat's EXCEPTION fault, with this as the reason.
                    out.error = exception_report(exc)
            summary.decisions += 1
            if action is NO_REPLY:
                del replies[-1]  # the referee's clock decides: a time-out, not an illegal answer
            elif action is not None and is_action(action):
                wire.action_to_wire(action, out.action)
            elif action is not None:
                summary.errors += 1
                log.error("bot returned %r, not an action", action)
            # A big batch of slow decisions goes out in parts, so early answers are not late.
            if time.perf_counter() - started > PARTIAL_REPLY_S:
                send(reply)
                reply = referee_pb2.BotMessage()
                replies = reply.decisions.replies
                started = time.perf_counter()
        if replies:
            send(reply)
    for message in update.faults:
        notice = wire.fault_notice_from_wire(message)
        summary.faults = [*summary.faults[-99:], notice]
        where = f"match {notice.match_id} seat {notice.seat}" if notice.match_id else "this connection"
        about = f", request {notice.request_id}" if notice.request_id else ""
        print(f"sixnimmt: fault ({notice.kind.value}) in {where}{about}: {notice.reason}", file=sys.stderr)
        game = summary.playing.get((notice.match_id, notice.seat))
        if game is not None:
            game["faults"][notice.kind.value] = game["faults"].get(notice.kind.value, 0) + 1
        faulted = bots.get((notice.match_id, notice.seat))
        if faulted is not None:
            _call(faulted.on_fault, notice, summary)
    for over in update.overs:
        key = (over.match_id, over.seat)
        bot = bots.pop(key, None)
        if over.match_id in seats_of and over.seat in seats_of[over.match_id]:
            seats_of[over.match_id].remove(over.seat)
            if not seats_of[over.match_id]:
                del seats_of[over.match_id]
        summary.games += 1
        if len(summary.results) >= KEEP_RESULTS:
            del summary.results[: len(summary.results) - KEEP_RESULTS + 1]
        game = summary.playing.pop(key, None) or {"variant": "", "seats": [], "faults": {}}
        result = {
            "match_id": over.match_id,
            "variant": game["variant"],
            "seat": over.seat,
            "seats": game["seats"],
            "scores": list(over.scores),
            "ranks": list(over.ranks),
            "termination": over.termination,
            "faults": game["faults"],
        }
        summary.results.append(result)
        if bot is not None:
            _call(bot.on_game_over, wire.outcome_from_wire(over), summary)
        if on_over is not None:
            on_over(result)


def exception_report(exc: BaseException) -> str:
    """What the runner tells the referee of a bot's exception: the end of its traceback, bounded."""
    report = traceback.TracebackException.from_exception(exc)
    # The bot's own frames (the SDK's say nothing to its author), the last three, and the error.
    own = [frame for frame in report.stack if not frame.filename.startswith(_SDK_DIR)]
    report.stack = traceback.StackSummary.from_list((own or list(report.stack))[-3:])
    return bounded("".join(report.format()), MAX_REASON_CHARS)


def _call(method: Callable[[Any], None], argument: Any, summary: RunSummary) -> None:
    try:
        method(argument)
    except Exception:
        summary.errors += 1
        traceback.print_exc(file=sys.stderr)
