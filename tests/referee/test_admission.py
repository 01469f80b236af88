"""Admission before Hello, on virtual time: pools by transport, limits per TCP peer and per token.

The bookkeeping of :mod:`referee.server.admission` alone (a clock the test moves); the same limits
on a real referee under attack are in ``test_fair_admission.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from referee.server.admission import BURST_S, CHARGE_EVERY_S, PRUNE_AT, Admission, Flooded, Limits, Refused
from referee.settings import SettingsError, load

LIMITS = Limits(pool=4, per_peer=2, peer_per_s=3, per_token=2, token_per_s=1)
UNIX = "unix:"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(body: Callable[[Admission, Clock], Awaitable[None]], limits: Limits = LIMITS) -> None:
    """Run ``body`` on an event loop (tickets hold futures) with a fresh admission and clock."""
    clock = Clock()
    asyncio.run(body(Admission(limits, clock), clock))


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("unix:", None),
        ("unix:/run/referee.sock", None),
        ("unix-abstract:referee", None),
        ("ipv4:203.0.113.7:50123", "203.0.113.7"),
        ("ipv6:[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::/64"),
        ("ipv6:[2001:db8:1:2::1]:5000", "2001:db8:1:2::/64"),
        ("ipv6:[::ffff:198.51.100.9]:7000", "198.51.100.9"),
        ("ipv6:[fe80::1%eth0]:7000", "fe80::/64"),
    ],
)
def test_a_peer_is_its_address_and_an_ipv6_peer_its_64(peer: str, address: str | None) -> None:
    from referee.server.admission import peer_address

    assert peer_address(peer) == address


def test_a_full_unix_pool_closes_its_oldest_stream_never_the_newcomer() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        tickets = [admission.anonymous(UNIX) for _ in range(4)]
        assert not any(t.evicted.done() for t in tickets)  # type: ignore[union-attr]
        newcomer = admission.anonymous(UNIX)
        assert tickets[0].evicted.done() and "closed to make room" in tickets[0].evicted.result()  # type: ignore[union-attr]
        assert "SIXNIMMT_MAX_HELLO_STREAMS" in tickets[0].evicted.result()  # type: ignore[union-attr]
        assert not any(t.evicted.done() for t in [*tickets[1:], newcomer])  # type: ignore[union-attr]
        # A stream that has sent its Hello leaves the pool: it is never closed for room.
        tickets[1].leave()
        admission.anonymous(UNIX)
        assert not tickets[2].evicted.done()  # type: ignore[union-attr]
        assert admission.waiting == 4

    run(body)


def test_tcp_and_the_unix_socket_never_share_a_pool() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        local = [admission.anonymous(UNIX) for _ in range(4)]
        # A full TCP pool (four peers of two streams each, the rate refilled meanwhile) ...
        for number in range(40):
            clock.now += 1
            admission.anonymous(f"ipv4:198.51.100.{number % 8}:{1000 + number}")
        # ... closed TCP streams only.
        assert not any(t.evicted.done() for t in local)  # type: ignore[union-attr]
        assert len(admission.tcp.waiting) == 4 and len(admission.unix.waiting) == 4

    run(body)


def test_one_tcp_peer_cannot_fill_another_peers_places() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        honest = admission.anonymous("ipv4:192.0.2.1:4000")
        attacker = []
        for _ in range(50):
            clock.now += 0.5  # slow enough for its rate: only the places limit it
            attacker.append(admission.anonymous("ipv6:[2001:db8::7]:5000"))
        # The attacker closed only its own streams (two may wait: the per-peer limit).
        assert not honest.evicted.done()  # type: ignore[union-attr]
        assert sum(not t.evicted.done() for t in attacker) == LIMITS.per_peer  # type: ignore[union-attr]
        # Another address of the attacker's /64 is the same peer.
        admission.anonymous("ipv6:[2001:db8::8]:5000")
        assert sum(not t.evicted.done() for t in attacker) == LIMITS.per_peer - 1  # type: ignore[union-attr]

    run(body)


def test_a_tcp_peer_reopening_streams_is_held_to_its_rate_and_others_are_not() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        burst = int(LIMITS.peer_per_s * BURST_S)
        for _ in range(burst):
            admission.anonymous("ipv4:203.0.113.5:1").leave()
        with pytest.raises(Refused, match="SIXNIMMT_PEER_STREAMS_PER_S"):
            admission.anonymous("ipv4:203.0.113.5:2")
        admission.anonymous("ipv4:203.0.113.6:1")  # another peer: its own bucket
        clock.now += 1.01 / LIMITS.peer_per_s  # one stream's worth refilled
        admission.anonymous("ipv4:203.0.113.5:3").leave()
        with pytest.raises(Refused):
            admission.anonymous("ipv4:203.0.113.5:4")

    run(body)


def test_a_token_over_its_own_limits_is_refused_and_charged_at_most_once_a_second() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        held = [admission.named("token:A") for _ in range(LIMITS.per_token)]
        with pytest.raises(Flooded, match="SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN") as first:
            admission.named("token:A")
        assert first.value.charge
        with pytest.raises(Flooded) as again:
            admission.named("token:A")
        assert not again.value.charge  # refused, not charged twice within the second
        admission.named("token:B")  # another token: its own limits
        # Nothing anonymous waits in a pool because of the token's streams, and they are never
        # closed for room.
        assert not admission.unix.waiting and held[0].evicted is None
        for ticket in held:
            ticket.leave()
        clock.now += CHARGE_EVERY_S
        # The rate: one a second (two at once), and streams that leave at once still count.
        admission.named("token:A").leave()  # the one refilled meanwhile
        with pytest.raises(Flooded, match="SIXNIMMT_TOKEN_STREAMS_PER_S") as rate:
            admission.named("token:A")
        assert rate.value.charge
        clock.now += 1.01
        admission.named("token:A").leave()

    run(body)


def test_idle_peers_are_forgotten_and_busy_ones_kept() -> None:
    async def body(admission: Admission, clock: Clock) -> None:
        busy = admission.anonymous("ipv4:10.0.0.1:1")
        for number in range(PRUNE_AT + 10):
            admission.anonymous(f"ipv4:10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}:1").leave()
            clock.now += 0.01
        clock.now += BURST_S + CHARGE_EVERY_S
        admission.anonymous("ipv4:172.16.0.1:1")
        # A full dictionary was pruned at the next new peer: the idle ones went, the busy one stays.
        assert len(admission.peers) < PRUNE_AT
        assert "10.0.0.1" in admission.peers and not busy.evicted.done()  # type: ignore[union-attr]

    run(body, Limits(pool=10_000, per_peer=2, peer_per_s=100, per_token=2, token_per_s=1))


def test_the_limits_are_settings_and_the_per_stream_ones_cannot_be_zero() -> None:
    settings = load({"SIXNIMMT_MAX_HELLO_STREAMS_PER_PEER": "3", "SIXNIMMT_TOKEN_STREAMS_PER_S": "0"})
    assert Limits.of(settings) == Limits(pool=64, per_peer=3, peer_per_s=10, per_token=4, token_per_s=0)
    for name in ("SIXNIMMT_MAX_HELLO_STREAMS_PER_PEER", "SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN"):
        with pytest.raises(SettingsError, match=name):
            load({name: "0"})


def test_grpc_tells_a_unix_socket_stream_from_a_tcp_one(tmp_path: Path) -> None:
    """What the pools rely on: ``context.peer()`` of this gRPC, as :func:`peer_address` reads it."""
    import grpc

    from referee.server.admission import peer_address

    seen: list[str] = []

    async def handler(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        seen.append(context.peer())
        return b""

    async def body() -> None:
        server = grpc.aio.server()
        method = grpc.unary_unary_rpc_method_handler(handler)
        server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("probe.Probe", {"Peer": method})]
        )
        server.add_insecure_port(f"unix:{tmp_path / 'probe.sock'}")
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            for address in (f"unix:{tmp_path / 'probe.sock'}", f"127.0.0.1:{port}"):
                async with grpc.aio.insecure_channel(address) as channel:
                    await channel.unary_unary("/probe.Probe/Peer")(b"", timeout=10)
        finally:
            await server.stop(None)

    asyncio.run(body())
    unix, tcp = seen
    assert unix.startswith("unix:") and peer_address(unix) is None
    assert tcp.startswith("ipv4:127.0.0.1:") and peer_address(tcp) == "127.0.0.1"


def test_refused_streams_are_counted_by_why(tmp_path: Path) -> None:
    """A flood shows on /metrics: the referee in this process, its counter read from the registry."""
    import grpc
    from prometheus_client import REGISTRY

    from referee.server.app import start_referee

    def count(reason: str) -> float:
        return REGISTRY.get_sample_value("sixnimmt_referee_streams_refused_total", {"reason": reason}) or 0.0

    async def body() -> None:
        address = f"unix:{tmp_path / 'referee.sock'}"
        running = await start_referee(address, load({"SIXNIMMT_HELLO_MS": "100"}))
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                play = channel.stream_stream(
                    "/sixnimmt.v1.Referee/Play", request_serializer=None, response_deserializer=None
                )
                for metadata in ((("sixnimmt-token", "0" * 48),), None):
                    call = play(metadata=metadata, timeout=10)
                    with pytest.raises(grpc.aio.AioRpcError):
                        await call.read()
        finally:
            await running.stop(0)

    before = {reason: count(reason) for reason in ("unknown_token", "no_hello")}
    asyncio.run(body())
    assert count("unknown_token") == before["unknown_token"] + 1
    assert count("no_hello") == before["no_hello"] + 1
