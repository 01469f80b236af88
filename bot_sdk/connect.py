"""``sixnimmt bot connect``: keep a bot connected to a server from its author's machine.

The bot presents its account's API key (``snk_…``) in Hello, where a bot the platform starts
presents an entrant token, and stays connected: the server adds matches to the connection as
leagues seat the account (a standing connection, docs/remote.md). The SDK's runner plays them,
one bot object per match and seat, as for any bot. When the stream ends (the server restarts,
the network drops) it connects again with exponential backoff and takes up the games left; a
refused key ends it with one line. Only the SDK is needed (gRPC), never the server extra.
"""

from __future__ import annotations

import functools
import json
import queue
import random
import signal
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from bot_sdk.bot import Bot
from bot_sdk.runner import CHANNEL_OPTIONS, RunSummary, _handle, takes_events, token_metadata
from referee import wire
from referee.settings import load as load_settings
from sixnimmt.v1 import referee_pb2, referee_pb2_grpc

FIRST_RETRY_S = 1.0
MAX_RETRY_S = 60.0
FINAL = {
    grpc.StatusCode.UNAUTHENTICATED: "the server refused the key",
    grpc.StatusCode.PERMISSION_DENIED: "the server refused the key",
    grpc.StatusCode.INVALID_ARGUMENT: "the server refused the connection",
    grpc.StatusCode.FAILED_PRECONDITION: "the server refused the connection",
    grpc.StatusCode.UNIMPLEMENTED: "the server is not a sixnimmt referee",
}
"""Status codes that trying again cannot change: the command stops with one line."""
REVOKED = "the API key was revoked"


class ConnectError(RuntimeError):
    """The bot cannot play on this server: a refused key, or no connection within the retries."""


@dataclass(slots=True)
class ConnectSummary:
    """What ``bot connect`` did, over every connection."""

    connections: int = 0
    games: int = 0
    decisions: int = 0
    errors: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "connections": self.connections,
            "games": self.games,
            "decisions": self.decisions,
            "errors": self.errors,
        }


def open_channel(server: str, *, tls: bool = False, tls_ca: Path | None = None) -> grpc.Channel:
    """A channel to ``server``: plaintext, or TLS checked against ``tls_ca`` (else the system's roots)."""
    if not tls and tls_ca is None:
        return grpc.insecure_channel(server, options=CHANNEL_OPTIONS)
    try:
        roots = tls_ca.read_bytes() if tls_ca is not None else None
    except OSError as exc:
        raise ConnectError(f"cannot read the CA certificate {tls_ca}: {exc.strerror}") from None
    return grpc.secure_channel(
        server, grpc.ssl_channel_credentials(root_certificates=roots), options=CHANNEL_OPTIONS
    )


def connect(
    factory: Callable[[], Bot],
    *,
    server: str,
    key: str,
    name: str = "bot",
    tls: bool = False,
    tls_ca: Path | None = None,
    retries: int | None = None,
    say: Callable[[str], None] | None = None,
    json_lines: bool = False,
    on_game: Callable[[dict[str, Any]], None] | None = None,
) -> ConnectSummary:
    """Play every match ``server`` gives the key's account until stopped (SIGTERM, SIGINT).

    ``retries`` bounds the failed attempts in a row (``None``: no bound); a connection that was
    welcomed resets the count. Raises :class:`ConnectError` with the reason on a refused key, a
    revoked key, or when the retries are used up. Each game that ends is passed to ``on_game``
    (its result, as :func:`bot_sdk.runner._handle` makes it); by default it is printed on stdout,
    one line a game (:func:`game_line`), or one JSON object a line with ``json_lines``.
    """
    if not server:
        raise ConnectError("no server: pass --server HOST:PORT")
    if not key:
        raise ConnectError("no API key: pass --key or set SIXNIMMT_API_KEY")
    say = say or (lambda line: print(f"sixnimmt: {line}", file=sys.stderr, flush=True))
    if on_game is None:
        on_game = functools.partial(print_game, json_lines=json_lines)
    stopping = threading.Event()
    total = ConnectSummary()
    summary = RunSummary()
    bots: dict[tuple[str, int], Bot] = {}
    seats_of: dict[str, list[int]] = defaultdict(list)
    current: list[queue.SimpleQueue[referee_pb2.BotMessage | None]] = []

    def stop(signum: int, frame: Any) -> None:
        stopping.set()
        for outgoing in current:
            bye = referee_pb2.BotMessage()
            bye.goodbye.reason = f"signal {signum}"
            outgoing.put(bye)
            outgoing.put(None)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)  # Ctrl-C: a goodbye too, not a broken stream
    failures = 0
    delay = FIRST_RETRY_S
    try:
        while not stopping.is_set():
            outgoing: queue.SimpleQueue[referee_pb2.BotMessage | None] = queue.SimpleQueue()
            current[:] = [outgoing]
            welcomed, why = _session(
                open_channel(server, tls=tls, tls_ca=tls_ca),
                key,
                name,
                outgoing,
                factory,
                bots,
                seats_of,
                summary,
                say,
                server,
                on_game,
            )
            if welcomed:
                total.connections += 1
                failures, delay = 0, FIRST_RETRY_S
            if stopping.is_set():
                break
            failures += 1
            if retries is not None and failures > retries:
                raise ConnectError(f"{why}; gave up after {retries} retries")
            wait = delay * random.uniform(0.8, 1.2)
            say(f"{why}; connecting again in {wait:.1f} s")
            if stopping.wait(wait):
                break
            delay = min(delay * 2, MAX_RETRY_S)
    finally:
        total.games, total.decisions, total.errors = summary.games, summary.decisions, summary.errors
    return total


def _session(
    channel: grpc.Channel,
    key: str,
    name: str,
    outgoing: queue.SimpleQueue[referee_pb2.BotMessage | None],
    factory: Callable[[], Bot],
    bots: dict[tuple[str, int], Bot],
    seats_of: dict[str, list[int]],
    summary: RunSummary,
    say: Callable[[str], None],
    server: str,
    on_game: Callable[[dict[str, Any]], None],
) -> tuple[bool, str]:
    """One connection, until its stream ends: (whether it was welcomed, why it ended)."""
    hello = referee_pb2.BotMessage()
    hello.hello.token = key
    hello.hello.name = name
    hello.hello.protocol = wire.PROTOCOL_VERSION
    hello.hello.events = takes_events(factory, load_settings().bot_events)  # as bot run does
    hello.hello.table_once = True
    outgoing.put(hello)

    def requests() -> Iterator[referee_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    welcomed = False
    with channel:
        stub = referee_pb2_grpc.RefereeStub(channel)
        try:
            # The key in the metadata too: admitted within the key's own limits (docs/protocol.md).
            for message in stub.Play(requests(), metadata=token_metadata(key)):
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    welcomed = True
                    resumed = len(message.welcome.seats)
                    say(
                        f"connected to {server}"
                        + (f", taking up {resumed} seats" if resumed else "")
                        + "; playing every match it gives this bot"
                    )
                elif kind == "update":
                    _handle(message.update, factory, bots, seats_of, summary, outgoing.put, on_game)
                elif kind == "goodbye":
                    reason = message.goodbye.reason
                    if reason == REVOKED:
                        raise ConnectError(f"the server at {server} closed the connection: {reason}")
                    return welcomed, f"the server said goodbye ({reason})"
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
            if code in FINAL:
                raise ConnectError(f"{FINAL[code]} ({code.name}): {details}") from None
            if code is grpc.StatusCode.UNAVAILABLE and not welcomed:
                unreachable = "connect" in details.lower() or "resolve" in details.lower()
                return welcomed, (
                    f"cannot reach {server}" if unreachable else f"{server} is not available"
                ) + f" ({details})"
            label = code.name if code is not None else "error"
            return welcomed, f"the connection to {server} ended ({label}: {details})"
        finally:
            outgoing.put(None)
    return welcomed, f"the connection to {server} ended"


def game_line(result: dict[str, Any]) -> str:
    """One line for a game that ended: match, variant, the seats, this seat's score and rank, faults.

    ``game m-7f3a (classic) seat 1 of random, mybot: score 12, rank 1 of 2; faults: timeout 1``
    """
    seat = result["seat"]
    scores, ranks = result["scores"], result["ranks"]
    score = scores[seat] if 0 <= seat < len(scores) else "?"
    rank = ranks[seat] if 0 <= seat < len(ranks) else "?"
    seats = ", ".join(result["seats"]) or "?"
    line = (
        f"game {result['match_id']} ({result['variant'] or '?'}) seat {seat} of {seats}:"
        f" score {score}, rank {rank} of {len(ranks)}"
    )
    if result["faults"]:
        faults = sorted(result["faults"].items())
        line += "; faults: " + ", ".join(f"{kind} {count}" for kind, count in faults)
    return line


def print_game(result: dict[str, Any], *, json_lines: bool = False) -> None:
    """Print a game that ended on stdout: :func:`game_line`, or its result as one JSON object."""
    print(json.dumps(result) if json_lines else game_line(result), flush=True)
