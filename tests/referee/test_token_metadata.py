"""The token in the call's metadata: checked before any message, held to the token's own limits.

On the session's real referee (``sixnimmt referee serve`` on a Unix socket): an unknown token is
refused at once, without waiting for a Hello; a Hello must carry the metadata's token; streams
over a token's own limit are refused and charged to that token's seats, and to no other seat of
their matches.
"""

from __future__ import annotations

import queue
import threading
import time

import grpc
from refkit import Processes

from arena.matches import MatchPlan, RefereeClient
from bot_sdk.runner import token_metadata
from referee.faults import FaultKind
from sixnimmt.v1 import referee_pb2

PLAY = "/sixnimmt.v1.Referee/Play"


def hello(token: str) -> bytes:
    return referee_pb2.BotMessage(hello=referee_pb2.Hello(token=token, protocol=1)).SerializeToString()


class Stream:
    """A Play stream naming ``named`` in its metadata, sending ``first`` (if any), then waiting."""

    def __init__(self, address: str, named: str, first: bytes | None = None) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        if first is not None:
            self.outgoing.put(first)
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.ended = threading.Event()
        call = self.channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
        self.responses = call(iter(self.outgoing.get, None), metadata=token_metadata(named), timeout=60)
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self) -> None:
        try:
            for _ in self.responses:
                pass
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.details = exc.details() or ""
            self.status = exc.code()
        self.ended.set()

    def close(self) -> None:
        self.outgoing.put(None)
        self.responses.cancel()
        self.ended.wait(10)
        self.channel.close()


def test_a_header_carries_only_a_token_it_can() -> None:
    assert token_metadata("3f9c0a") == (("sixnimmt-token", "3f9c0a"),)
    assert token_metadata("snk_ab-_Z9") == (("sixnimmt-token", "snk_ab-_Z9"),)
    assert token_metadata("a\nb") == token_metadata("héllo") == token_metadata(" x") == ()


def test_an_unknown_token_is_refused_before_any_message(referee: RefereeClient) -> None:
    stream = Stream(referee.address, "0" * 48)  # sends nothing: a Hello would be waited for 10 s
    try:
        assert stream.ended.wait(5)
        assert stream.status == grpc.StatusCode.UNAUTHENTICATED
    finally:
        stream.close()


def test_the_hello_must_carry_the_metadatas_token(referee: RefereeClient) -> None:
    _, tokens = referee.create_matches("classic", {"players": 2}, [MatchPlan(("a", "b"), 1)], connect_ms=3000)
    stream = Stream(referee.address, tokens["a"], hello(tokens["b"]))
    try:
        assert stream.ended.wait(10)
        assert stream.status == grpc.StatusCode.INVALID_ARGUMENT, stream.details
        assert "sixnimmt-token" in stream.details
    finally:
        stream.close()


def test_streams_over_a_tokens_limit_are_charged_to_its_own_seats_only(
    referee: RefereeClient, bots: Processes
) -> None:
    (match_id,), tokens = referee.create_matches(
        "classic",
        {"players": 2, "hands": 1, "target": None},
        [MatchPlan(("flooder", "honest"), 3)],
        connect_ms=30_000,
    )
    # Four streams naming the flooder's token may wait for their Hello (the default limit) ...
    held = [Stream(referee.address, tokens["flooder"]) for _ in range(4)]
    try:
        # ... the referee admits them in the order they come: the fifth or a later one is refused.
        extra: list[Stream] = []
        deadline = time.monotonic() + 20
        while not any(s.status == grpc.StatusCode.RESOURCE_EXHAUSTED for s in extra):
            assert time.monotonic() < deadline, [(s.status, s.details) for s in extra]
            extra.append(Stream(referee.address, tokens["flooder"]))
            extra[-1].ended.wait(0.5)
        refused = next(s for s in extra if s.status == grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert "SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN" in refused.details
        # Both bots play (the flooder's own bot too: its Hello is read on a fresh stream).
        for stream in held + extra:
            stream.close()
        bots.sdk("flooder", "random", tokens["flooder"])
        bots.sdk("honest", "random", tokens["honest"])
        match = referee.result(match_id, timeout=60)
    finally:
        for stream in held:
            stream.close()
    flooder, honest = match.seats
    assert honest.faults == {}, honest.reasons
    assert flooder.faults.get(FaultKind.PROTOCOL, 0) >= 1
    why = [reason for _, reason, _ in flooder.reasons]
    assert any("SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN" in reason for reason in why), why
