"""Admission of bot streams before their Hello: who may wait for it, how many at once, how often.

A bot stream holds a slot of the referee from the moment it opens until its Hello is read. The
slots are kept apart by who asks, so that nobody's flood costs anybody else a connection:

- a stream that names its token in the call's metadata (:data:`TOKEN_METADATA`; the SDK always
  does) is checked against that token before anything is read: an unknown one is refused at once
  and holds nothing (the servicer does that), a known one waits within that token's own limits
  (streams waiting for their Hello, new streams a second). A stream beyond them is refused with
  :class:`Flooded`, which the servicer charges to that token's own seats;
- a stream without it (a client written from the protocol's text, which sends the token in Hello
  only) waits in a pool of its transport: the Unix socket's, where the league's sandboxed bots
  connect, or TCP's. On TCP each peer address (an IPv6 peer: its /64, which one host usually
  holds whole) has its own limits, streams waiting and new streams a second, within the pool.

A full pool of anonymous streams makes room by closing the stream that has waited longest: an
honest client sends its Hello with the stream, so the oldest waiting stream is the likeliest to be
a flood's, and a flood cannot keep a newcomer out (it would have to open a pool's worth of
streams between a newcomer's opening and its Hello). A token's own streams are never evicted:
over its limits it is the token's holder who floods, and who is refused.

Everything here is plain bookkeeping, O(1) per stream, on an injectable clock.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from referee.settings import Settings
from referee.wire import TOKEN_METADATA

BURST_S = 2.0
"""A rate limit lets a burst of this many seconds' worth of new streams through at once."""
CHARGE_EVERY_S = 1.0
"""A flooding token's seats are charged at most once per this many seconds (each refused stream
is refused, but a flood of thousands must not write thousands of faults and log lines a second)."""
PRUNE_AT = 1024
"""Peers or tokens tracked before the idle ones (nothing waiting, rate bucket full) are dropped."""


class Refused(Exception):
    """A stream is not admitted (``RESOURCE_EXHAUSTED``); the message says which limit."""


class Flooded(Refused):
    """A stream over its own token's limits: refused, and charged to the token's seats."""

    def __init__(self, reason: str, charge: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.charge = charge
        """Whether to charge the token's seats now (at most once per :data:`CHARGE_EVERY_S`)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The admission limits (``SIXNIMMT_*`` settings: see :func:`Limits.of`)."""

    pool: int
    """Anonymous streams that may wait for their Hello at once, per transport (Unix socket, TCP)."""
    per_peer: int
    """Anonymous streams that may wait for their Hello at once from one TCP peer address."""
    peer_per_s: int
    """New anonymous streams a second from one TCP peer address (0: no limit)."""
    per_token: int
    """Streams naming one token in their metadata that may wait for their Hello at once."""
    token_per_s: int
    """New streams a second naming one token in their metadata (0: no limit)."""

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The limits the settings give."""
        return cls(
            pool=settings.max_hello_streams,
            per_peer=settings.max_hello_streams_per_peer,
            peer_per_s=settings.peer_streams_per_s,
            per_token=settings.max_hello_streams_per_token,
            token_per_s=settings.token_streams_per_s,
        )


@dataclass(slots=True)
class TokenBucket:
    """A rate limit: ``rate`` takes a second on average, ``rate × BURST_S`` at once."""

    rate: float
    tokens: float
    stamp: float

    @classmethod
    def full(cls, rate: float, now: float) -> TokenBucket:
        return cls(rate, rate * BURST_S, now)

    def _refill(self, now: float) -> None:
        self.tokens = min(self.rate * BURST_S, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, now: float) -> bool:
        """Take one if there is one (a rate of 0 always has one)."""
        if self.rate <= 0:
            return True
        self._refill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def idle(self, now: float) -> bool:
        """Whether the bucket is full again (forgetting it changes nothing)."""
        if self.rate <= 0:
            return True
        self._refill(now)
        return self.tokens >= self.rate * BURST_S


class Ticket:
    """A stream's place while it waits for its Hello; :meth:`leave` once it is read (or not)."""

    __slots__ = ("_owner", "_pools", "evicted")

    def __init__(self, owner: _Waiting | None, evictable: bool) -> None:
        self._pools: list[HelloPool] = []
        self._owner = owner
        self.evicted: asyncio.Future[str] | None = (
            asyncio.get_running_loop().create_future() if evictable else None
        )
        """Done, with the reason, when a full pool closed this stream to make room."""

    def leave(self) -> None:
        """The stream no longer waits for its Hello (read, refused, or gone). Idempotent."""
        for pool in self._pools:
            pool.waiting.pop(self, None)
        self._pools.clear()
        if self._owner is not None:
            self._owner.waiting -= 1
            self._owner = None

    def evict(self, reason: str) -> None:
        self.leave()
        if self.evicted is not None and not self.evicted.done():
            self.evicted.set_result(reason)


class HelloPool:
    """Anonymous streams waiting for their Hello, oldest first, at most ``limit``."""

    __slots__ = ("full_reason", "limit", "waiting")

    def __init__(self, limit: int, full_reason: str) -> None:
        self.limit = limit
        self.full_reason = full_reason
        self.waiting: OrderedDict[Ticket, None] = OrderedDict()

    def make_room(self) -> None:
        """Close the oldest waiting streams until one more fits."""
        while self.waiting and len(self.waiting) >= self.limit:
            oldest = next(iter(self.waiting))
            oldest.evict(f"closed to make room: {self.full_reason}")

    def enter(self, ticket: Ticket) -> None:
        self.waiting[ticket] = None
        ticket._pools.append(self)


@dataclass(slots=True)
class _Waiting:
    """What is tracked of one token or TCP peer: its streams waiting, its rate bucket."""

    waiting: int
    bucket: TokenBucket
    pool: HelloPool | None = None
    """A peer's own pool (a token's streams are counted, never evicted)."""
    charged: float = float("-inf")
    """When the token's seats were last charged for a flood."""

    def idle(self, now: float) -> bool:
        """Whether forgetting it changes nothing: nothing waits, its bucket is full, no recent charge."""
        return (
            self.waiting == 0
            and (self.pool is None or not self.pool.waiting)
            and self.bucket.idle(now)
            and now - self.charged >= CHARGE_EVERY_S
        )


def peer_address(peer: str) -> str | None:
    """The address a TCP stream's per-peer limits count against; ``None`` for a Unix socket.

    ``context.peer()`` of gRPC says ``ipv4:1.2.3.4:5678``, ``ipv6:[2001:db8::1]:5678`` or, for a
    Unix socket, ``unix:`` (with no path: every stream of a socket looks alike, which is why the
    league's own bots name their token in metadata). An IPv6 peer counts as its /64, which one host
    usually holds whole; an IPv4-mapped one as its IPv4 address.
    """
    scheme, _, rest = peer.partition(":")
    if scheme in ("unix", "unix-abstract"):
        return None
    if scheme not in ("ipv4", "ipv6"):
        return peer or "unknown"
    host = rest.rsplit(":", 1)[0].removeprefix("[").removesuffix("]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host or peer
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class Admission:
    """The limits on streams waiting for their Hello, kept per token, per transport, per TCP peer."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.unix = HelloPool(
            limits.pool,
            f"{limits.pool} streams without a token in their metadata were waiting for their Hello"
            " on the Unix socket (SIXNIMMT_MAX_HELLO_STREAMS)",
        )
        self.tcp = HelloPool(
            limits.pool,
            f"{limits.pool} streams without a token in their metadata were waiting for their Hello"
            " over TCP (SIXNIMMT_MAX_HELLO_STREAMS)",
        )
        self.peers = _Entries()
        self.tokens = _Entries()

    # -- streams that name a token ------------------------------------------------------------

    def named(self, credential: str) -> Ticket:
        """Admit a stream naming a known token (``credential``: its identity), or :class:`Flooded`."""
        now = self.clock()
        limits = self.limits
        entry = self.tokens.get(credential)
        if entry is None:
            self.tokens.prune(now)
            entry = self.tokens[credential] = _Waiting(0, TokenBucket.full(limits.token_per_s, now))
        if entry.waiting >= limits.per_token:
            why = (
                f"flood: more than {limits.per_token} streams with this token waiting for their Hello"
                " at once (SIXNIMMT_MAX_HELLO_STREAMS_PER_TOKEN)"
            )
            raise Flooded(why, self._charge(entry, now))
        if not entry.bucket.take(now):
            why = (
                f"flood: more than {limits.token_per_s} new streams a second with this token"
                " (SIXNIMMT_TOKEN_STREAMS_PER_S)"
            )
            raise Flooded(why, self._charge(entry, now))
        entry.waiting += 1
        return Ticket(entry, evictable=False)

    @staticmethod
    def _charge(entry: _Waiting, now: float) -> bool:
        if now - entry.charged < CHARGE_EVERY_S:
            return False
        entry.charged = now
        return True

    # -- streams that do not ------------------------------------------------------------------

    def anonymous(self, peer: str) -> Ticket:
        """Admit a stream without a token in its metadata, from ``peer`` (``context.peer()``).

        Over a TCP peer's rate: :class:`Refused`. A full pool closes its oldest stream instead.
        """
        limits = self.limits
        address = peer_address(peer)
        if address is None:
            if limits.pool < 1:
                raise Refused("no stream may wait for its Hello (SIXNIMMT_MAX_HELLO_STREAMS is 0)")
            ticket = Ticket(None, evictable=True)
            self.unix.make_room()
            self.unix.enter(ticket)
            return ticket
        now = self.clock()
        entry = self.peers.get(address)
        if entry is None:
            self.peers.prune(now)
            pool = HelloPool(
                limits.per_peer,
                f"{limits.per_peer} streams from this address were waiting for their Hello"
                " (SIXNIMMT_MAX_HELLO_STREAMS_PER_PEER)",
            )
            entry = self.peers[address] = _Waiting(0, TokenBucket.full(limits.peer_per_s, now), pool)
        if not entry.bucket.take(now):
            raise Refused(
                f"more than {limits.peer_per_s} new streams a second from this address"
                f" (SIXNIMMT_PEER_STREAMS_PER_S); name your token in the call's metadata"
                f" ({TOKEN_METADATA})"
            )
        if limits.pool < 1 or limits.per_peer < 1:
            raise Refused("no stream may wait for its Hello (a limit is 0)")
        assert entry.pool is not None
        ticket = Ticket(None, evictable=True)
        entry.pool.make_room()
        self.tcp.make_room()
        entry.pool.enter(ticket)
        self.tcp.enter(ticket)
        return ticket

    @property
    def waiting(self) -> int:
        """Streams waiting for their Hello now, of every kind."""
        return len(self.unix.waiting) + len(self.tcp.waiting) + sum(t.waiting for t in self.tokens.values())


class _Entries(dict[str, _Waiting]):
    """Tokens or peers being tracked; the idle ones are forgotten once there are many."""

    prune_at = PRUNE_AT

    def prune(self, now: float) -> None:
        """Forget the idle entries when there are many (amortized: the bound doubles meanwhile)."""
        if len(self) < self.prune_at:
            return
        for key in [key for key, entry in self.items() if entry.idle(now)]:
            del self[key]
        self.prune_at = max(PRUNE_AT, 2 * len(self))
