"""Token buckets: the API's rate limits per key and per client address (``SIXNIMMT_API_*``).

:class:`Buckets` keeps them in this process. With a Redis (``SIXNIMMT_REDIS_URL``, else the broker's
when ``SIXNIMMT_BROKER_URL`` is a Redis), :class:`RedisBuckets` keeps them there, shared by every
replica of the API: a key's rate is the same whichever replica answers it. :func:`make_buckets`
chooses.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from typing import Any

from referee.settings import Settings

log = logging.getLogger("sixnimmt.api")


class Buckets:
    """A token bucket per name: ``burst`` tokens at most, refilled at ``rate`` per second.

    :meth:`take` spends one token and says whether there was one. At most ``keep`` names are
    remembered (the least recently used go first), so guessed keys and addresses cannot grow
    it without bound; a name forgotten starts again full, as one never seen.
    """

    def __init__(self, rate: float, burst: int, *, keep: int = 100_000) -> None:
        self.rate, self.burst, self.keep = rate, burst, keep
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, name: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.pop(name, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[name] = (tokens, now)
            while len(self._buckets) > self.keep:
                self._buckets.popitem(last=False)
            return allowed

    def retry_after(self, name: str) -> int:
        """Whole seconds until ``name`` has a token again."""
        with self._lock:
            tokens, _ = self._buckets.get(name, (float(self.burst), 0.0))
        return max(1, int((1.0 - tokens) / self.rate + 0.999))


# One round trip: refill by the time elapsed (Redis's own clock, the same for every replica), spend
# a token if there is one, keep the bucket for as long as it takes to fill again (then a missing one
# is a full one). Returns {allowed (1/0), whole seconds until the next token}.
_TAKE = """
local rate, burst, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local kept = redis.call('HMGET', KEYS[1], 'tokens', 'last')
local tokens = tonumber(kept[1]) or burst
local last = tonumber(kept[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - last) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'last', tostring(now))
redis.call('EXPIRE', KEYS[1], ttl)
local wait = 0
if tokens < 1 then wait = math.ceil((1 - tokens) / rate) end
return {allowed, wait}
"""


class RedisBuckets:
    """:class:`Buckets` kept in Redis under ``sixnimmt:api:limit:SCOPE:NAME``, one script call a take.

    Each bucket expires once it would be full again, so guessed keys and addresses do not stay.
    When Redis cannot answer (within the client's timeout), this replica falls back to its own
    buckets for :data:`RETRY_S` seconds before it asks Redis again (a Redis that hangs costs one
    request a timeout, not every request), and logs it at most once a minute: the limits hold per
    replica meanwhile, never not at all.
    """

    RETRY_S = 5.0

    def __init__(self, client: Any, scope: str, rate: float, burst: int) -> None:
        self.rate, self.burst, self.scope = rate, burst, scope
        self._client = client
        self._take = client.register_script(_TAKE)
        self._ttl = max(1, math.ceil(burst / rate) + 1)
        self._local = Buckets(rate, burst)
        self._waits: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._warned = 0.0
        self._down_until = 0.0

    def _key(self, name: str) -> str:
        return f"sixnimmt:api:limit:{self.scope}:{name}"

    def take(self, name: str, now: float | None = None) -> bool:
        if time.monotonic() < self._down_until:
            return self._local.take(name, now)
        try:
            allowed, wait = self._take(keys=[self._key(name)], args=[self.rate, self.burst, self._ttl])
        except Exception as exc:  # redis.RedisError, OSError: this replica's own limits meanwhile
            self._down_until = time.monotonic() + self.RETRY_S
            if time.monotonic() - self._warned > 60:
                self._warned = time.monotonic()
                log.warning("rate limits per replica for now: Redis did not answer (%s)", exc)
            return self._local.take(name, now)
        with self._lock:
            self._waits[name] = int(wait)
            self._waits.move_to_end(name)
            while len(self._waits) > 10_000:
                self._waits.popitem(last=False)
        return bool(allowed)

    def retry_after(self, name: str) -> int:
        """Whole seconds until ``name`` has a token again (as the last :meth:`take` saw it)."""
        with self._lock:
            wait = self._waits.get(name)
        return max(1, wait) if wait is not None else self._local.retry_after(name)


def redis_url(settings: Settings) -> str:
    """Where the limits are shared: ``SIXNIMMT_REDIS_URL``, else a Redis broker's URL, else ``""``."""
    if settings.redis_url:
        return settings.redis_url
    if settings.broker_url.startswith(("redis://", "rediss://", "unix://")):
        return settings.broker_url
    return ""


def make_buckets(settings: Settings, scope: str, rate: float, burst: int) -> Buckets | RedisBuckets:
    """Buckets shared in Redis when the settings name one (:func:`redis_url`), else this process's."""
    url = redis_url(settings)
    if not url:
        return Buckets(rate, burst)
    import redis

    client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    return RedisBuckets(client, scope, rate, burst)
