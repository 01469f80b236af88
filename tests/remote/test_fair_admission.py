"""Fair admission under a Hello flood at full speed: nobody pays for the attacker but the attacker.

A real ``sixnimmt referee serve`` with a public TCP port and a Unix socket (as an operator runs it
for remote bots and the league's sandboxed ones). Three floods run at once
(``tests/referee/bots/hello_flood.py``): an unauthenticated TCP peer reopening streams in a loop,
a local process on the Unix socket opening streams without a Hello, and a bot flooding with its
own valid token. Meanwhile matches are played by the league's kind of bots over the Unix socket
(the SDK, which names its token in the call's metadata), a bot speaking the bare protocol (Hello
only) over the Unix socket, a remote bot connected over TCP with its API key (``bot connect``),
and the flooding bot itself. No seat gets a fault but the flooder's, whose seats are charged a
protocol fault naming the limit it broke. A client that shares the TCP attacker's address and
names no token is the control: it pays, which is what every client paid when all streams shared
one pool.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from remotekit import ADMIN, start_referee
from testkit import wait_for

from arena.matches import BotProcess, MatchPlan, RefereeClient, spawn_bot
from referee.faults import FaultKind
from referee.server.remote import key_hash
from sixnimmt.v1 import referee_pb2

BOTS = Path(__file__).resolve().parents[1] / "referee" / "bots"
FLOOD = BOTS / "hello_flood.py"
RAWBOT = BOTS / "rawbot.py"
SLOW = f"{BOTS / 'sdkbots.py'}:SlowRandom"
KEY = "snk_fairadmissiontestkey0123456789abcdef"


class Flood:
    """A ``hello_flood.py`` process, started once it says it is flooding."""

    def __init__(self, address: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(FLOOD), address, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "flooding", "the flood did not start"

    def stop(self) -> dict[str, dict[str, object]]:
        """Stop it; what its streams ended with."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        return json.loads(out.strip().splitlines()[-1]) if out.strip() else {"ended": {}, "reasons": {}}

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@contextmanager
def floods() -> Iterator[list[Flood]]:
    started: list[Flood] = []
    try:
        yield started
    finally:
        for flood in started:
            flood.kill()


def hello_status(address: str, token: str) -> grpc.StatusCode:
    """A bare-protocol client's first stream (Hello, no metadata): the status it ends with."""
    message = referee_pb2.BotMessage(hello=referee_pb2.Hello(token=token, protocol=1))
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream("/sixnimmt.v1.Referee/Play", request_serializer=None)
        try:
            for _ in call(iter([message.SerializeToString()]), timeout=10):
                pass
        except grpc.RpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


@pytest.mark.slow
def test_a_hello_flood_at_full_speed_costs_no_other_seat_a_fault(tmp_path: Path) -> None:
    referee = start_referee(tmp_path / "referee")
    client = RefereeClient(referee.socket, admin_token=ADMIN)
    processes: list[subprocess.Popen[str] | BotProcess] = []
    try:
        keys = referee_pb2.SetRemoteKeysRequest(generation=1)
        keys.keys.add(key_id="k1", account="alice", sha256=key_hash(KEY), max_connections=2, max_matches=8)
        client.stub.SetRemoteKeys(keys, timeout=10, metadata=client.metadata)
        with floods() as running:
            # The anonymous floods first: every honest client below connects while they run.
            running.append(Flood(referee.public, "--streams", "64"))
            running.append(Flood(referee.socket, "--streams", "200"))
            env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
            remote = subprocess.Popen(
                [sys.executable, "-m", "bot_sdk.cli", "bot", "connect", "random", "--key", KEY,
                 "--server", referee.public, "--retries", "0"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            processes.append(remote)

            def alice_online() -> bool:
                request = referee_pb2.GetRemoteStatusRequest(accounts=["alice"])
                reply = client.stub.GetRemoteStatus(request, timeout=10, metadata=client.metadata)
                assert remote.poll() is None, remote.stderr.read() if remote.stderr else ""
                return reply.accounts[0].connections == 1

            wait_for(alice_online, 60, "the remote bot to connect over TCP during the flood")
            entrants = ("league", "plain", "alice", "flooder")
            plans = [MatchPlan(entrants[i:] + entrants[:i], seed) for seed, i in enumerate(range(4))]
            ids, tokens = client.create_matches(
                "classic",
                {"hands": 2, "target": None},
                plans,
                decision_ms=10_000,
                bank_ms=30_000,
                connect_ms=60_000,
                max_faults=1000,
                remote={"alice": "alice"},
            )
            socket = referee.socket
            processes.append(
                spawn_bot(SLOW, referee=socket, token=tokens["league"], variant="classic", name="league")
            )
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(RAWBOT), "--", "first", socket, tokens["plain"]],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                )
            )  # fmt: skip
            # The flooder plays its seats slowly (they stay live), then floods with its own token.
            processes.append(
                spawn_bot(
                    SLOW, referee=socket, token=tokens["flooder"], variant="classic", name="flooder",
                    env={"BOT_THINK": "0.1"},
                )
            )  # fmt: skip
            wait_for(lambda: all(client.result(i, wait=False).status == "running" for i in ids), 60, "play")
            running.append(Flood(socket, "--token", tokens["flooder"], "--streams", "64"))
            # The control: a client that names no token, from the TCP attacker's address, pays (the
            # attacker takes that address's rate as it refills: now and then the client wins one).
            tries = [hello_status(referee.public, "0" * 48) for _ in range(10)]
            refused = tries.count(grpc.StatusCode.RESOURCE_EXHAUSTED)
            assert refused >= 5, tries
            matches = [client.result(i, timeout=300) for i in ids]
            tcp, unix, token = (flood.stop() for flood in running)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        client.close()
        referee.stop()

    print(f"control: {refused} of 10 streams refused")
    print(
        f"streams ended: TCP flood {tcp['ended']}, Unix flood {unix['ended']}, token flood {token['ended']}"
    )
    # Each flood ran at full speed and was refused or closed, for the limit that concerns it.
    assert sum(tcp["ended"].values()) >= 500 and tcp["ended"].get("RESOURCE_EXHAUSTED", 0) >= 400  # type: ignore[attr-defined]
    assert unix["ended"].get("RESOURCE_EXHAUSTED", 0) >= 100  # type: ignore[attr-defined]
    assert "closed to make room" in str(unix["reasons"])
    assert "SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN" in str(
        token["reasons"]
    ) or "SIXNIMMT_TOKEN_STREAMS_PER_S" in str(token["reasons"])
    for match in matches:
        assert match.status == "finished"
        for seat in match.seats:
            if seat.entrant != "flooder":
                assert seat.faults == {}, (seat.entrant, seat.reasons)
                assert seat.defaulted == 0
            else:
                # Its own seats are charged, a protocol fault naming the limit it broke.
                assert seat.faults.get(FaultKind.PROTOCOL, 0) >= 1, seat.reasons
                assert all(kind is FaultKind.PROTOCOL and "flood" in why for kind, why, _ in seat.reasons), (
                    seat.reasons
                )
