"""A referee that cannot be starved: oversized unauthenticated messages and idle streams.

A real ``sixnimmt referee serve`` process; its peak RSS (VmHWM) comes from /proc. While ten
streams each send a 40 MiB first message, a match of SDK bots plays on with a decision time and
no time bank, so a single answer later than the deadline would be a timeout fault.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from refkit import Processes
from testkit import wait_for

from arena.matches import MatchPlan, RefereeClient
from sixnimmt.v1 import referee_pb2

PLAY = "/sixnimmt.v1.Referee/Play"
MIB = 1 << 20


@contextmanager
def referee_process(tmp: Path, **settings: str) -> Iterator[tuple[subprocess.Popen[bytes], RefereeClient]]:
    """``sixnimmt referee serve`` on a Unix socket with ``SIXNIMMT_*`` settings; stopped on exit."""
    address = f"unix:{tmp / 'referee.sock'}"
    ready = tmp / "ready"
    env = {
        **os.environ,
        "SIXNIMMT_REFEREE_METRICS_PORT": "0",
        "SIXNIMMT_ADMIN_TOKEN": "admin-token-for-tests",
        **{f"SIXNIMMT_{k.upper()}": v for k, v in settings.items()},
    }
    command = [sys.executable, "-m", "bot_sdk.cli", "referee", "serve", "--listen", address]
    process = subprocess.Popen(
        [*command, "--ready-file", str(ready)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    client = RefereeClient(address, admin_token="admin-token-for-tests")
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, "the referee did not start"
            time.sleep(0.02)
        client.wait_serving()
        yield process, client
    finally:
        client.close()
        process.terminate()
        # Within Kubernetes' default grace period, however many matches it holds (12,000 waiting
        # ones took 2.7 s on a slow machine; 10 s and more before a cancelled match left its
        # link at once, links.EntrantLink.wait_attached).
        process.wait(30)


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set size (VmHWM) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def send_first(address: str, payload: bytes, timeout: float = 60) -> grpc.StatusCode:
    """Open a Play stream, send ``payload`` as its first message, return the status it ends with."""
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
        try:
            for _ in call(iter([payload]), timeout=timeout):
                pass
        except grpc.RpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


class OpenStream:
    """A Play stream held open: it sends ``first`` (if any), then nothing until closed."""

    def __init__(self, address: str, first: bytes | None = None) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        if first is not None:
            self.outgoing.put(first)
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.received = 0
        self.ended = threading.Event()
        call = self.channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
        self.responses = call(iter(self.outgoing.get, None), timeout=60)
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self) -> None:
        try:
            for _ in self.responses:
                self.received += 1
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


def hello(token: str) -> bytes:
    return referee_pb2.BotMessage(hello=referee_pb2.Hello(token=token, protocol=1)).SerializeToString()


def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_ten_unauthenticated_40_mib_messages_neither_grow_the_referee_nor_slow_a_match(
    tmp_path: Path,
) -> None:
    with referee_process(tmp_path) as (process, client):
        (match_id,), tokens = client.create_matches(
            "classic",
            {"hands": 3, "target": None},
            [MatchPlan(("g",) * 4, 3)],
            decision_ms=500,
            bank_ms=0,
        )
        bots = Processes(client)
        try:
            bots.sdk("g", "tests/referee/bots/sdkbots.py:SlowRandom", tokens["g"], BOT_THINK="0.03")
            time.sleep(0.5)  # the match is under way
            before = peak_rss_mib(process.pid)
            token = "x" * (40 * MIB)
            payload = referee_pb2.BotMessage(hello=referee_pb2.Hello(token=token)).SerializeToString()
            statuses: list[grpc.StatusCode] = []
            threads = [
                threading.Thread(target=lambda: statuses.append(send_first(client.address, payload)))
                for _ in range(10)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
            growth = peak_rss_mib(process.pid) - before
            assert client.result(match_id, wait=False).status == "running", "the match outlived the attack"
            match = client.result(match_id, timeout=120)
        finally:
            bots.close()
    print(f"peak RSS growth under ten 40 MiB messages: {growth:.1f} MiB")
    assert statuses == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 10
    assert growth <= 150
    # Every decision answered within its deadline (no bank to spend): no timeout, nothing defaulted.
    assert match.status == "finished"
    assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
    # Each seat chose all of its 3 × 10 cards (and a row for each low card it played, if any).
    assert all(s.decisions >= 3 * 10 for s in match.seats)


def welcomed(address: str, first: bytes, timeout: float = 30) -> OpenStream:
    """A stream sending ``first`` once the referee has welcomed it.

    A slot of a stream the client just closed frees when the referee hears of the cancellation,
    which is asynchronous: a stream refused with RESOURCE_EXHAUSTED before that is tried again.
    """
    deadline = time.monotonic() + timeout
    while True:
        stream = OpenStream(address, first)
        until(lambda s=stream: s.received > 0 or s.status is not None, timeout)
        if stream.received > 0:
            return stream
        stream.close()
        assert stream.status == grpc.StatusCode.RESOURCE_EXHAUSTED, stream.status
        assert time.monotonic() < deadline, "the referee never freed the closed stream's slot"
        time.sleep(0.1)


def test_a_full_pool_closes_its_oldest_stream_and_the_stream_cap_holds(tmp_path: Path) -> None:
    with referee_process(tmp_path, max_hello_streams="3", max_streams="4", hello_ms="60000") as (_, client):
        _, tokens = client.create_matches(
            "classic", {}, [MatchPlan(("a", "b", "a", "b"), 1)], connect_ms=60_000
        )
        streams = [OpenStream(client.address) for _ in range(4)]
        try:
            # Four streams without a Hello for three places: one of them is closed, whichever
            # came first, and it is told why.
            until(lambda: sum(s.status is not None for s in streams) == 1)
            (closed,) = [s for s in streams if s.status is not None]
            assert closed.status == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "closed to make room" in closed.details
            # A newcomer that sends its Hello is let in, a waiting stream making room for it.
            streams.append(welcomed(client.address, hello(tokens["a"])))
            until(lambda: sum(s.status is not None for s in streams) == 2)
            assert send_first(client.address, hello("not-a-token")) == grpc.StatusCode.UNAUTHENTICATED
            streams.append(welcomed(client.address, hello(tokens["b"])))
            # Four streams now (two waiting for Hello, two playing): the cap on all streams.
            assert [s.status for s in streams].count(None) == 4
            assert send_first(client.address, hello(tokens["b"])) == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert [s.status for s in streams].count(None) == 4
        finally:
            for stream in streams:
                stream.close()


@pytest.mark.parametrize(
    ("message", "status"),
    [
        (None, grpc.StatusCode.DEADLINE_EXCEEDED),
        (
            referee_pb2.BotMessage(hello=referee_pb2.Hello(token="t" * 5000, protocol=1)),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ),
    ],
    ids=["no Hello within the deadline", "a Hello over its size bound"],
)
def test_the_hello_is_bounded_in_time_and_size(
    tmp_path: Path, message: referee_pb2.BotMessage | None, status: grpc.StatusCode
) -> None:
    with referee_process(tmp_path, hello_ms="300") as (_, client):
        if message is None:
            stream = OpenStream(client.address)
            try:
                assert stream.ended.wait(10)
                assert stream.status == status
            finally:
                stream.close()
        else:
            assert send_first(client.address, message.SerializeToString()) == status


BIG = 12_000
"""Matches in the big CreateMatches: enough that creating them takes a while however fast the
referee sets a match up (6000 took 0.3-0.7 s), so the admin calls answered meanwhile can be counted."""


def test_a_big_create_matches_does_not_hold_up_a_running_match(tmp_path: Path) -> None:
    with referee_process(tmp_path) as (_, client):
        (match_id,), tokens = client.create_matches(
            "classic", {"hands": 5, "target": None}, [MatchPlan(("g",) * 4, 3)], decision_ms=1000, bank_ms=0
        )
        bots = Processes(client)
        cards = tmp_path / "cards"
        try:
            bots.sdk(
                "g",
                "tests/referee/bots/sdkbots.py:SlowRandom",
                tokens["g"],
                BOT_THINK="0.02",
                BOT_CARDS=str(cards),
            )
            wait_for(cards.exists, 60, "the match to be under way: its first card played", 0.01)
            answered = 0
            done = threading.Event()

            def probe() -> None:
                # Trivial admin calls, one after another, while the big one runs.
                nonlocal answered
                while not done.is_set():
                    client.result(match_id, wait=False)
                    answered += 1
                    time.sleep(0.01)

            prober = threading.Thread(target=probe)
            prober.start()
            before, cards_before = answered, len(cards.read_text().split())
            plans = [MatchPlan(("w", "x", "y", "z"), seed) for seed in range(BIG)]
            ids, _ = client.create_matches("classic", {}, plans, connect_ms=600_000)
            cards_meanwhile = len(cards.read_text().split()) - cards_before
            meanwhile = answered - before
            done.set()
            prober.join()
            assert len(ids) == BIG
            match = client.result(match_id, timeout=120)
        finally:
            bots.close()
    print(f"CreateMatches of {BIG}: {meanwhile} admin calls and {cards_meanwhile} cards meanwhile")
    # The match went on while the matches were created: the referee read its cards and asked for
    # the next ones (a loop held throughout would have let the bot play one card at most). Its
    # cards, not its status after the call, are the measure: how long the creation takes depends
    # on the machine, how long the match plays does not.
    assert cards_meanwhile >= 3, cards_meanwhile
    # Done at once, the creation held the event loop throughout: the admin call in flight waited
    # for all of it, and no other was answered meanwhile. Done in a thread and in slices, calls
    # keep being answered (the longest waits are garbage collections over the thousands of
    # matches: 0.1 s alone, up to 0.4 s on a loaded machine). Counted, not timed.
    assert meanwhile >= 10, meanwhile
    assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4
