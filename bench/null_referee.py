"""The referee's floor: a server that only carries a referee's bytes, to measure gRPC's share.

``referee.cpu_ms_per_hand`` is everything the referee process does per hand: gRPC's transport of
the Updates and replies, and the referee's own Python (the driver, the rules, the codec, the
results). This server does the first alone. Before it is timed, the real driver plays the same
one-hand classic matches in this process (:func:`_record`, through :func:`bench_referee.play`: the real
:class:`~referee.server.connection.Connection` buffers, the bots answering every request of an
Update at once, as the SDK does), and each entrant's Updates are kept as the bytes the
referee's stream sent, cut into Updates of :data:`CHUNK` requests (the size of the real
referee's in ``remote.p4``). ``serve`` then plays them back to real bot processes over gRPC: on
a stream's Hello it sends the Welcome and the entrant's first round of Updates, and each next
round once every request of the last is answered (the replies are parsed and counted, as the
referee must at least do). The same server plays one match's steps back one at a time for
``grpc.floor_rtt_ms``. Its CPU per hand is what a referee written in any language would still
pay for gRPC's Python server; what is left of ``referee.cpu_ms_per_hand`` is the referee's own.

``python bench/null_referee.py serve ADDRESS RECORDING`` serves a recording (a pickled
:data:`Recording`, each entrant's token its name); it prints ``ready`` once it listens, and
``played TOKEN REPLIES`` when a stream has had all its token's Updates and answered them.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
from bench_referee import play
from pingpong import serve_stream

from referee import wire
from sixnimmt.v1 import referee_pb2

ENTRANTS = "abcd"
SERVICE = "sixnimmt.v1.Referee"

CHUNK = 64
"""Requests per Update played back: about what the referee's own Updates hold in ``remote.p4``
(68 to 70 in a 600-hand run, counted per connection), where replies come in as they are made
and the referee's batches are those of one turn of its loop."""

Recording = dict[str, list[tuple[list[bytes], int]]]
"""Entrant → its rounds in order: the Updates of each (sent at once) and how many requests they hold."""


def _chunks(message: bytes, size: int) -> list[bytes]:
    """An Update cut into Updates of at most ``size`` requests: the starts go with the first,
    the game overs with the last."""
    update = referee_pb2.RefereeMessage.FromString(message).update
    requests = list(update.requests)
    parts: list[bytes] = []
    for at in range(0, max(len(requests), 1), size):
        part = referee_pb2.RefereeMessage()
        if at == 0:
            part.update.starts.extend(update.starts)
        part.update.requests.extend(requests[at : at + size])
        if at + size >= len(requests):
            part.update.overs.extend(update.overs)
            part.update.faults.extend(update.faults)
        parts.append(part.SerializeToString())
    return parts


async def _record(
    matches: int, chunk: int = CHUNK, config: dict[str, Any] | None = None, seats: str = ENTRANTS
) -> Recording:
    """What the referee sends each entrant for ``matches`` matches of classic (``config``, by
    default :data:`bench_referee.CONFIG`) seated as ``seats`` (an entrant's name per seat, the match's seed
    its number), its Updates cut to ``chunk`` requests; the SDK's Hello for a bot that takes no
    events (no events, a step's table once per Update)."""
    recording: Recording = {name: [] for name in dict.fromkeys(seats)}

    def keep(name: str, message: bytes, update: referee_pb2.Update) -> None:
        recording[name].append((_chunks(message, chunk), len(update.requests)))

    await play(matches, config=config, seats=seats, table_once=True, observe=keep)
    return recording


async def serve(address: str, recording: Recording) -> None:
    welcome = referee_pb2.RefereeMessage()
    welcome.welcome.protocol = wire.PROTOCOL_VERSION
    goodbye = referee_pb2.RefereeMessage()
    goodbye.goodbye.reason = "all games over"
    welcome_bytes, goodbye_bytes = welcome.SerializeToString(), goodbye.SerializeToString()

    async def play(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        hello = referee_pb2.BotMessage.FromString(await anext(requests)).hello
        updates = recording[hello.token]
        yield welcome_bytes
        replies = 0
        for chunks, asked in updates:
            for update in chunks:
                yield update
            answered = 0
            while answered < asked:
                message = referee_pb2.BotMessage.FromString(await anext(requests))
                answered += len(message.decisions.replies)
            replies += answered
        # Said before the goodbye: once the bot has it, the stream may end without this
        # generator being asked for anything more.
        print(f"played {hello.token} {replies}", flush=True)
        yield goodbye_bytes

    await serve_stream(address, SERVICE, play)


@contextlib.contextmanager
def running(recording: Recording) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """This server in a process of its own serving ``recording``: its address, and the process
    (its stdout has a ``played`` line for every stream it played to the end); killed on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "recording"
        path.write_bytes(pickle.dumps(recording))
        address = f"unix:{tmp}/null.sock"
        server = subprocess.Popen(
            [sys.executable, __file__, "serve", address, str(path)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                raise RuntimeError("the null referee did not start")
            yield address, server
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(sys.argv[2], pickle.loads(Path(sys.argv[3]).read_bytes())))
