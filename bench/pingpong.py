"""A raw grpc.aio bidirectional ping-pong: the floor that a decision round trip is compared with.

``python bench/pingpong.py serve ADDRESS`` runs an echo server with the same service shape as
the referee (a stream-stream method on generic bytes); ``client ADDRESS N`` sends N tiny
messages one at a time the way the SDK does (a sync stream fed from a queue) and prints the
mean round trip in milliseconds.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator

import grpc

METHOD = "/bench.PingPong/Play"


Play = Callable[[AsyncIterator[bytes], grpc.aio.ServicerContext], AsyncIterator[bytes]]


async def serve_stream(address: str, service: str, play: Play) -> None:
    """Serve ``play`` as ``service``'s stream-stream method ``Play`` on generic bytes; prints
    ``ready`` once it listens, then runs until killed."""
    handler = grpc.method_handlers_generic_handler(
        service, {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(address)
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()


async def serve(address: str) -> None:
    async def play(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for message in requests:
            yield message

    await serve_stream(address, "bench.PingPong", play)


def client(address: str, count: int) -> float:
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def requests() -> Iterator[bytes]:
        while (message := outgoing.get()) is not None:
            yield message

    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(METHOD)(requests())
        outgoing.put(b"warm")
        next(call)
        start = time.perf_counter()
        for _ in range(count):
            outgoing.put(b"ping" * 8)
            next(call)
        elapsed = time.perf_counter() - start
        outgoing.put(None)
    return elapsed / count * 1000


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(sys.argv[2]))
    else:
        print(client(sys.argv[2], int(sys.argv[3])))
