"""A bot that speaks the wire with only the generated stubs, as a bot in another language would.

``python rawbot.py MODE ADDRESS TOKEN [--log FILE] [--count N] [--last]`` imports no ``bot_sdk``
and no ``referee`` module, only ``grpc`` and ``sixnimmt.v1``, and exits with status 4 if one got
imported anyway. It answers each request with its first legal option (``--last``: its last one),
and misbehaves as its mode says:

- ``first``: behaves;
- ``exit_early``: opens the stream and dies before sending anything;
- ``junk_socket``: writes junk bytes to the referee's socket instead of speaking HTTP/2;
- ``garbage``: after Hello, sends a payload that does not decode as a ``BotMessage``;
- ``quit``: after Hello, closes its side of the stream without Goodbye;
- ``foreign``: in its first ``count`` batches, first answers request ids that are not its own;
- ``twice``: answers its first ``count`` requests twice;
- ``flood``: sends ``count`` empty batches right after Hello instead of answering;
- ``stray``: sends ``count`` replies to made-up request ids right after Hello instead of answering;
- ``huge``: answers its first request with a message of more than 10 MB.

``--events on|off`` sets ``Hello.events`` (unset without it, as a bot written before the field
leaves it); ``--table-once`` sets ``Hello.table_once``.

``--log`` appends every message received to a file, each prefixed by its length (4 bytes, big
endian). When the referee ends the stream with an error status, the bot prints the status code
and exits with status 5.
"""

from __future__ import annotations

import argparse
import os
import queue
import socket
import sys
import time
from collections.abc import Iterator

import grpc

from sixnimmt.v1 import referee_pb2

PLAY = "/sixnimmt.v1.Referee/Play"
MADE_UP_ID = (1 << 63) + 12345


def answer(request: referee_pb2.DecisionRequest, reply: referee_pb2.DecisionReply, last: bool) -> None:
    """Answer with the request's first (or last) legal option: a number, or a tuple."""
    reply.id = request.id
    index = -1 if last else 0
    if request.tuple_options:
        reply.action.tuple.values.extend(request.tuple_options[index].values)
    else:
        reply.action.number = request.options[index]


def junk_socket(address: str) -> None:
    """Write bytes that are not HTTP/2 to the referee's listening socket."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(address.removeprefix("unix:"))
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
    with sock:
        sock.sendall(os.urandom(4096) + b"GET / HTTP/1.1\r\n\r\n" + b"\xff" * 4096)
        time.sleep(0.2)


def play(args: argparse.Namespace) -> int:
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def send(message: referee_pb2.BotMessage | bytes) -> None:
        outgoing.put(message if isinstance(message, bytes) else message.SerializeToString())

    def requests() -> Iterator[bytes]:
        while (item := outgoing.get()) is not None:
            yield item

    channel = grpc.insecure_channel(args.address)
    # Identity (de)serializers: the bot handles raw bytes, so it can send undecodable ones too.
    call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
    if args.mode == "exit_early":
        call(requests())
        time.sleep(0.3)
        os._exit(3)
    hello = referee_pb2.BotMessage()
    hello.hello.token = args.token
    hello.hello.name = f"rawbot-{args.mode}"
    hello.hello.protocol = 1
    if args.events is not None:
        hello.hello.events = args.events == "on"
    hello.hello.table_once = args.table_once
    send(hello)
    log = open(args.log, "ab") if args.log else None  # noqa: SIM115 - closed below
    batches = answered = 0
    status = 0
    try:
        for raw in call(requests()):
            if log is not None:
                log.write(len(raw).to_bytes(4, "big") + raw)
                log.flush()
            message = referee_pb2.RefereeMessage.FromString(raw)
            kind = message.WhichOneof("kind")
            if kind == "goodbye":
                break
            if kind == "welcome":
                if args.mode == "garbage":
                    send(b"\xff\xff\xff\xff\x0f" + b"\xff" * 64)  # wire type 7 does not exist
                elif args.mode == "quit":
                    outgoing.put(None)  # done sending; read on until the referee ends the stream
                elif args.mode == "flood":
                    for _ in range(args.count):
                        send(referee_pb2.BotMessage(decisions=referee_pb2.DecisionBatch()))
                elif args.mode == "stray":
                    for number in range(args.count):
                        stray = referee_pb2.BotMessage()
                        stray.decisions.replies.add(id=MADE_UP_ID + number).action.number = 1
                        send(stray)
                continue
            if kind != "update" or not message.update.requests or args.mode in ("garbage", "flood", "stray"):
                continue
            batch = referee_pb2.BotMessage()
            replies = batch.decisions.replies
            if args.mode == "foreign" and batches < args.count:
                for request in message.update.requests:
                    # Ids next to its own belong to other seats of the match; the last is made up.
                    for other in (request.id + 1, request.id - 1, MADE_UP_ID):
                        replies.add(id=other).action.number = 1
            again = []
            for request in message.update.requests:
                answer(request, replies.add(), args.last)
                if args.mode == "huge" and batches == 0:
                    replies[-1].action.tuple.values.extend(range(1 << 21, (1 << 21) + 2_600_000))
                if args.mode == "twice" and answered < args.count:
                    # the same answer again: in this batch, or in a message of its own
                    if answered % 2 == 0:
                        answer(request, replies.add(), args.last)
                    else:
                        again.append(request)
                answered += 1
            send(batch)
            for request in again:
                duplicate = referee_pb2.BotMessage()
                answer(request, duplicate.decisions.replies.add(), args.last)
                send(duplicate)
            batches += 1
    except grpc.RpcError as exc:
        print(f"rawbot: stream ended: {exc.code().name}: {exc.details()}", file=sys.stderr)
        status = 5
    finally:
        outgoing.put(None)
        if log is not None:
            log.close()
        channel.close()
    return status


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("address")
    parser.add_argument("token")
    parser.add_argument("--log")
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--last", action="store_true")
    parser.add_argument("--events", choices=("on", "off"))
    parser.add_argument("--table-once", action="store_true")
    args = parser.parse_args()
    if args.mode == "junk_socket":
        junk_socket(args.address)
        return 0
    status = play(args)
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("bot_sdk", "referee"))
    if leaked:
        print(f"rawbot: imported SDK or referee modules: {leaked}", file=sys.stderr)
        return 4
    return status


if __name__ == "__main__":
    sys.exit(main())
