"""Routing blocks to the Celery worker that holds their bots warm, falling back to any worker.

Each worker consumes the shared queue and a queue of its own, ``sixnimmt-blocks@<worker>``.
After every block a worker's pool process writes which bot versions it now holds warm into a
Redis set, ``sixnimmt-warm:<worker>``, that lives for :func:`ttl_s` seconds, and the same the
other way round: for each bot version, the workers that hold it and until when, in a sorted set
``sixnimmt-warm-bot:<sha256>`` (each worker's score is the moment its hold runs out). The
worker's main process (its reconciliation loop) keeps both alive while the worker runs. To send
a block, :func:`queue_for` reads the block's bot versions' sorted sets (one command a bot, not
one a worker: sending no longer reads every worker's set, docs/capacity.md) and picks the live
worker that holds the most of them (the shorter queue among equals; the :data:`CANDIDATES`
holding the most are asked for their queue's length), and the shared queue when none holds any
or each such worker has :data:`DEPTH` blocks waiting already (so that a league of the same few
bots keeps every worker busy). A worker that dies stops renewing its holds:
once the set is gone, new blocks go elsewhere, and the messages waiting in its own queue are no
longer counted (:func:`queues`, :func:`waiting_messages`), so the reconciliation sends their
blocks again to a live one.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from typing import Any

import redis
from sqlalchemy import select

from referee.settings import load as load_settings
from workers import metrics
from workers.store import repo
from workers.store.engine import reading
from workers.store.schema import blocks, bot_versions, league_entrants

log = logging.getLogger(__name__)

SHARED = "sixnimmt-blocks"
"""The queue every worker consumes (``workers.queue.app``'s default)."""
DEPTH = 2
"""Blocks that may wait in one worker's own queue; more go to the shared queue."""
KEY = "sixnimmt-warm:"
"""Prefix of each worker's set of warm bot versions (SHA-256 of their artifacts)."""
BY_BOT = "sixnimmt-warm-bot:"
"""Prefix of each bot version's sorted set of the workers holding it warm, scored by the moment
(Unix seconds) each hold runs out."""
CANDIDATES = 32
"""At most this many workers holding a block's bots (those holding the most, then by name) are
asked for their queue's length when it is sent."""


def ttl_s() -> int:
    """How long a worker's set lives unless renewed: ``SIXNIMMT_WARM_ROUTE_S``, or by default two
    reconciliation periods and a second (the worker's main process renews it once a period, and a
    dead worker's set must be gone before its leases run out)."""
    settings = load_settings()
    return max(1, settings.warm_route_s or 2 * settings.reconcile_s + 1)


def worker_queue(worker: str) -> str:
    """The queue only ``worker`` (its Celery node name, ``name@host``) consumes."""
    return f"{SHARED}@{worker}"


_CLIENTS: dict[tuple[str, int], Any] = {}
"""One Redis client (its connection pool) per broker URL and process: a message sent no longer
opens a connection of its own. redis-py's pool notices a fork and reconnects in the child."""


def _client(broker_url: str) -> Any | None:
    if not broker_url.startswith(("redis://", "rediss://", "redis+socket://")):
        return None
    key = (broker_url, os.getpid())
    client = _CLIENTS.get(key)
    if client is None:
        client = redis.Redis.from_url(broker_url, socket_timeout=2, socket_connect_timeout=2)
        _CLIENTS[key] = client
    return client


def publish(worker: str, versions: Iterable[str], *, broker_url: str | None = None) -> None:
    """Say which bot versions ``worker`` holds warm now (after one of its blocks)."""
    settings = load_settings()
    client = _client(broker_url if broker_url is not None else settings.broker_url)
    if client is None or not worker:
        return
    key = KEY + worker
    try:
        ttl = ttl_s()
        until = time.time() + ttl
        held = sorted(set(versions))
        before = {_text(v) for v in client.smembers(key)}
        with client.pipeline() as pipe:
            pipe.delete(key)
            if held:
                pipe.sadd(key, *held)
                pipe.expire(key, ttl)
            for version in held:
                pipe.zadd(BY_BOT + version, {worker: until})
                pipe.zremrangebyscore(BY_BOT + version, "-inf", time.time())
                pipe.expire(BY_BOT + version, ttl)
            for version in before - set(held):
                pipe.zrem(BY_BOT + version, worker)
            pipe.execute()
    except Exception as exc:  # routing is a preference: a broker hiccup must not fail a block
        log.debug("cannot publish the warm bots of %s: %s", worker, exc)


def keep_alive(worker: str, *, broker_url: str | None = None) -> None:
    """Renew ``worker``'s holds while the worker runs (its reconciliation loop calls this)."""
    settings = load_settings()
    client = _client(broker_url if broker_url is not None else settings.broker_url)
    if client is None:
        return
    try:
        ttl = ttl_s()
        until = time.time() + ttl
        held = sorted(_text(v) for v in client.smembers(KEY + worker))
        with client.pipeline() as pipe:
            pipe.expire(KEY + worker, ttl)
            for version in held:
                pipe.zadd(BY_BOT + version, {worker: until}, xx=True)
                pipe.expire(BY_BOT + version, ttl)
            pipe.execute()
    except Exception as exc:
        log.debug("cannot renew the warm bots of %s: %s", worker, exc)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def live_workers(client: Any) -> dict[str, set[str]]:
    """Worker → the bot versions it holds warm, for every worker whose set is alive."""
    found: dict[str, set[str]] = {}
    for key in client.scan_iter(match=KEY + "*", count=200):
        name = key.decode() if isinstance(key, bytes) else str(key)
        found[name[len(KEY) :]] = {
            v.decode() if isinstance(v, bytes) else str(v) for v in client.smembers(key)
        }
    return found


def queue_for(versions: Iterable[str], *, broker_url: str | None = None, avoid: str | None = None) -> str:
    """The queue for a block of these bot versions: the live worker holding most of them warm.

    ``avoid``: a worker not to send it to (the one whose claim on the block ran out: it may be dead).
    """
    client = _client(broker_url if broker_url is not None else load_settings().broker_url)
    if client is None:
        return SHARED
    wanted = sorted(set(versions))
    try:
        # One command a bot version: the workers holding it whose hold has not run out.
        with client.pipeline(transaction=False) as pipe:
            for version in wanted:
                pipe.zrangebyscore(BY_BOT + version, time.time(), "+inf")
            holders = pipe.execute()
        held: dict[str, int] = {}
        for workers in holders:
            for name in workers:
                worker = _text(name)
                if worker != avoid:
                    held[worker] = held.get(worker, 0) + 1
        asked = sorted(held, key=lambda w: (-held[w], w))[:CANDIDATES]
        with client.pipeline(transaction=False) as pipe:
            for worker in asked:
                pipe.llen(worker_queue(worker))
            waiting = dict(zip(asked, (int(n) for n in pipe.execute()), strict=True))
    except Exception as exc:
        log.debug("cannot read the warm bots: %s", exc)
        return SHARED
    # The most of the block's bots warm, then the shortest queue; a worker that has DEPTH blocks
    # waiting already gets no more: the shared queue keeps every other worker busy meanwhile.
    ready = [w for w in sorted(asked) if waiting[w] < DEPTH]
    if not ready:
        return SHARED
    return worker_queue(max(ready, key=lambda w: (held[w], -waiting[w])))


def queues(broker_url: str) -> list[str]:
    """The queues a block's message may wait in: the shared one and each live worker's own."""
    client = _client(broker_url)
    if client is None:
        return [SHARED]
    try:
        return [SHARED, *(worker_queue(w) for w in sorted(live_workers(client)))]
    except Exception:
        return [SHARED]


def route(engine: Any, block_id: int, *, broker_url: str | None = None) -> str:
    """The queue for a block (see :func:`queue_for`), never the worker whose claim on it lapsed."""
    found = _block_facts(engine, block_id)
    if found is None:
        raise repo.NotFoundError(f"no block {block_id}")
    claimed_by, versions = found
    return queue_for(versions, broker_url=broker_url, avoid=claimed_by)


def block_versions(engine: Any, block_id: int) -> list[str]:
    """The SHA-256 of each bot version that plays in the block (what a warm pool holds)."""
    found = _block_facts(engine, block_id)
    return [] if found is None else found[1]


def _block_facts(engine: Any, block_id: int) -> tuple[str | None, list[str]] | None:
    """Who last claimed the block, and its bot versions (:func:`block_versions`); ``None``: no such block."""
    with reading(engine) as conn:
        row = conn.execute(
            select(blocks.c.league_id, blocks.c.entrants, blocks.c.claimed_by).where(blocks.c.id == block_id)
        ).first()
        if row is None:
            return None
        positions = [int(p) for p in row.entrants]
        query = (
            select(league_entrants.c.position, bot_versions.c.sha256)
            .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
            .where(league_entrants.c.league_id == row.league_id, league_entrants.c.position.in_(positions))
        )
        return row.claimed_by, sorted({str(sha) for _, sha in conn.execute(query)})


def waiting_messages(broker_url: str) -> int | None:
    """How many messages wait in the queues a block's message may wait in (:func:`queues`), as the
    broker reports them through kombu's public API (a passive queue declaration); ``None`` if it
    cannot be asked. Messages a worker holds unacknowledged are not counted (their blocks are
    claimed, or about to be), nor does it tell whose messages they are."""
    if not broker_url:
        return None
    try:
        return sum(metrics.waiting_messages(broker_url, queues(broker_url), timeout_s=5).values())
    except Exception as exc:
        log.debug("cannot count the messages waiting in the broker: %s", exc)
        return None
