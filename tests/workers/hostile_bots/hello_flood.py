"""Hostile: floods the referee with streams that never send their Hello, to starve the other bots.

At its first decision it opens streams at full speed for two seconds over the referee's socket
(``$SIXNIMMT_REFEREE``), half naming no token (as an anonymous peer), half naming its own token
in the call's metadata (``sixnimmt-token``), and never sends a Hello on any of them; in the middle
a newcomer without a token tries to get in with a Hello (a made-up token). Before
admission was kept apart, 64 such streams shut every other bot of the referee out with
``RESOURCE_EXHAUSTED`` (a ``disconnect`` fault of theirs). Now its anonymous streams only fill
the Unix socket's pool, whose oldest stream is closed for each newcomer, and its own token's
streams are refused past that token's limits and charged to its own seats: the other bots, which
name their tokens, never wait behind it, and a newcomer without one is let in. It reports by
raising ``hostile hello_flood: blocked: …`` (``SUCCEEDED`` if no newcomer got in), then plays on.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections import Counter

from bot_sdk import ClassicBot

TOKEN = "__TOKEN__"
FLOOD_S = 2.0
STREAMS = 192
PROBES = 5
PLAY = "/sixnimmt.v1.Referee/Play"
_done = False


async def _flood(address: str, token: str) -> dict[str, Counter[str]]:
    import grpc

    ended: dict[str, Counter[str]] = {"anonymous": Counter(), "token": Counter()}
    loop = asyncio.get_running_loop()
    stop = loop.time() + FLOOD_S
    channel = grpc.aio.insecure_channel(address)

    async def one(kind: str) -> None:
        metadata = (("sixnimmt-token", token),) if kind == "token" else None
        while loop.time() < stop:
            call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                metadata=metadata, timeout=max(0.05, stop - loop.time())
            )
            try:
                while await call.read() is not grpc.aio.EOF:
                    pass
                ended[kind]["OK"] += 1
            except grpc.aio.AioRpcError as exc:
                details = exc.details() or ""
                why = "per-token limit" if "TOKEN" in details else "room" if "make room" in details else ""
                ended[kind][f"{exc.code().name} {why}".strip()] += 1

    async def probe() -> None:
        """A newcomer in the middle of the flood: a Hello (with a made-up token) sent at once."""
        await asyncio.sleep(FLOOD_S / 2)
        hello = b"\x0a\x34\x0a\x30" + b"0" * 48 + b"\x18\x01"  # Hello{token: "0"*48, protocol: 1}
        for _ in range(PROBES):
            async with grpc.aio.insecure_channel(address) as fresh:
                call = fresh.stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                    timeout=5
                )
                await call.write(hello)
                try:
                    while await call.read() is not grpc.aio.EOF:
                        pass
                    ended["newcomer"]["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    ended["newcomer"][exc.code().name] += 1

    ended["newcomer"] = Counter()
    await asyncio.gather(probe(), *(one("token" if n % 2 else "anonymous") for n in range(STREAMS)))
    await channel.close(None)
    return ended


def attack() -> tuple[bool, str]:
    address, token = os.environ.get("SIXNIMMT_REFEREE", ""), os.environ.get("SIXNIMMT_TOKEN", "")
    if not address or not token:
        return False, "no referee or token in its environment"
    result: list[dict[str, Counter[str]]] = []
    # A thread of its own: the SDK's runner waits for this decision meanwhile.
    thread = threading.Thread(target=lambda: result.append(asyncio.run(_flood(address, token))))
    thread.start()
    thread.join()
    ended = result[0]
    # The newcomer got in if the referee read its Hello (and refused the made-up token).
    let_in = ended["newcomer"]["UNAUTHENTICATED"]
    detail = (
        f"{let_in} of {PROBES} newcomers were let in during the flood; its own token's streams"
        f" {dict(ended['token'])}; its anonymous streams {dict(ended['anonymous'])}"
    )
    return let_in == 0, detail


class HelloFlood(ClassicBot):
    """Attacks once per process, reports by raising, then plays the lowest card."""

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        global _done
        if not _done:
            _done = True
            succeeded, detail = attack()
            raise RuntimeError(f"hostile hello_flood: {'SUCCEEDED' if succeeded else 'blocked'}: {detail}")
        return min(view.hand)


if __name__ == "__main__" and sys.argv[1:] == ["attack"]:
    print(attack())
