"""A Hello flood at full speed: Play streams opened in a loop that never send their Hello.

``python hello_flood.py ADDRESS [--token TOKEN] [--streams N] [--hold S]`` keeps ``N`` streams
open at once (default 64), each held ``S`` seconds at most (default 2: the referee would wait 10
for a Hello), and opens another as soon as one ends: the referee closing it to make room, its
refusal, or the hold running out. Without ``--token`` the streams name no token in their metadata
(an unauthenticated TCP peer, or a sandboxed process on the Unix socket); with it they name that
token (a bot flooding with its own token, whose seats are the ones to be charged). Streams go out
over a few connections, each replaced now and then, as a client reconnecting in a loop would.

It prints ``flooding`` once 100 streams have ended, and on SIGTERM one JSON line: how many
streams ended with each status code, and a sample of the referee's reasons. Like ``rawbot.py`` it
imports only ``grpc`` and the generated stubs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from collections import Counter

import grpc

PLAY = "/sixnimmt.v1.Referee/Play"
CONNECTIONS = 4
STREAMS_PER_CONNECTION = 500
"""A connection is replaced after this many streams (a client that reconnects)."""


async def flood(address: str, token: str, streams: int, hold: float) -> None:
    ended: Counter[str] = Counter()
    reasons: dict[str, str] = {}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    metadata = (("sixnimmt-token", token),) if token else None
    channels = [grpc.aio.insecure_channel(address) for _ in range(CONNECTIONS)]
    opened = [0] * CONNECTIONS
    announced = False

    async def one(worker: int) -> None:
        nonlocal announced
        slot = worker % CONNECTIONS
        while not stop.is_set():
            if opened[slot] >= STREAMS_PER_CONNECTION:
                old, channels[slot] = channels[slot], grpc.aio.insecure_channel(address)
                opened[slot] = 0
                loop.call_later(hold + 1, lambda c=old: asyncio.ensure_future(c.close()))
            opened[slot] += 1
            call = channels[slot].stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                metadata=metadata, timeout=hold
            )
            try:
                while await call.read() is not grpc.aio.EOF:
                    pass
                status = "OK"
            except grpc.aio.AioRpcError as exc:
                status = exc.code().name
                reasons.setdefault(status, exc.details() or "")
            except asyncio.CancelledError:
                call.cancel()
                raise
            ended[status] += 1
            if not announced and sum(ended.values()) >= 100:
                announced = True
                print("flooding", flush=True)

    tasks = [asyncio.create_task(one(worker)) for worker in range(streams)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"ended": dict(ended), "reasons": reasons}), flush=True)
    for channel in channels:
        await channel.close(None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("--token", default="")
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--hold", type=float, default=2.0)
    args = parser.parse_args()
    asyncio.run(flood(args.address, args.token, args.streams, args.hold))


if __name__ == "__main__":
    main()
