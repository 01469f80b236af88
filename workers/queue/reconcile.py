"""Reconciliation: a started league finishes with nobody watching it.

``league start`` hands a league to the workers (``leagues.started_at``). From then on every
``sixnimmt worker`` runs :class:`Reconciler` in its main process, one pass every
``SIXNIMMT_RECONCILE_S``, and each pass, for every started league not yet finished:

- gives back the blocks whose lease expired (their worker died, or lost the store) and queues
  them again;
- queues the blocks that wait (pending, failed) with no message in the broker, waiting or held
  unacknowledged by a worker: a broker that restarted without persistence lost them;
- adds the next round of a league with a stopping rule once its round is stored, and marks a
  league finished once every block is stored (:func:`advance`, which the task that stores a
  block calls too: whoever stores the last block of a round adds the next);
- writes the worker's heartbeat (``league run`` warns when no worker has been seen for a while),
  and, when a lease expired, sweeps the directories that dead players left on this host.

Every message it sends names the store, the league and the block (:mod:`workers.queue.messages`); the
broker's messages count as a block's only when they name this store (a broker shared with
another store, or messages of the format before store ids, hide no block of this one).

Several workers reconcile at once without a coordinator: expiring a lease is a locked update that
one of them wins, and a block is queued again only by the worker that moves its ``queued_at``
(a compare-and-set), at most once per pass interval. A message sent twice anyway costs nothing:
a block is claimed under a lease and stored once.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from workers import metrics
from workers.play import lease
from workers.queue.messages import TASK, BlockMessage, parse
from workers.store import repo

log = logging.getLogger(__name__)

Send = Callable[[BlockMessage], object]
"""Queues one block: sends ``sixnimmt.play_block`` with the message's arguments to the broker."""

QUEUE = "sixnimmt-blocks"

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
"""No ``queued_at`` is before it: ``not_since=EPOCH`` sends only blocks never queued."""


@dataclass(slots=True)
class Pass:
    """What one reconciliation pass did."""

    leagues: int = 0
    queued: dict[str, list[int]] = field(default_factory=dict)
    """Reason (``unqueued``, ``lease_expired``, ``next_round``) → block ids sent."""
    expired: list[repo.BlockRow] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    stalled_s: float = 0.0

    def sent(self, reason: str, block_id: int) -> None:
        self.queued.setdefault(reason, []).append(block_id)
        metrics.REQUEUED.labels(reason).inc()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def queued_block_ids(
    broker_url: str, queue: str = QUEUE, *, store: str, warn: bool = True
) -> set[int] | None:
    """Blocks of the store ``store`` (its id) with a ``play_block`` message in a Redis broker,
    waiting or held unacknowledged by a worker; ``None`` if the broker cannot be read (or is not
    Redis). Messages naming another store, or none, are not counted: no worker of this store
    plays them."""
    if not broker_url.startswith(("redis://", "rediss://", "redis+socket://")):
        return None
    import redis
    from kombu.transport.redis import PRIORITY_STEPS, Channel

    from workers.queue.routing import queues

    try:
        client = redis.Redis.from_url(broker_url, socket_timeout=5, socket_connect_timeout=5)
        try:
            # The shared queue and the own queue of each live worker (a dead worker's queue does
            # not count: its blocks are sent again, to a live worker).
            names = queues(broker_url) if queue == QUEUE else [queue]
            keys = [
                k for q in names for k in (q, *(f"{q}{Channel.sep}{step}" for step in PRIORITY_STEPS if step))
            ]
            raw = [m for key in keys for m in client.lrange(key, 0, -1)]
            # kombu keeps each delivered, unacknowledged message as [message, exchange, routing key]
            held = [json.loads(v)[0] for v in client.hvals("unacked")]
        finally:
            client.close()
    except (redis.RedisError, ValueError, IndexError) as exc:
        (log.warning if warn else log.debug)("cannot read the broker's queue: %s", exc)
        return None
    ids = set()
    for message in [*(json.loads(m) for m in raw), *held]:
        named = _message_of(message)
        if named is not None and named.store == store:
            ids.add(named.block)
    return ids


def _message_of(message: Any) -> BlockMessage | None:
    """What a ``sixnimmt.play_block`` message in kombu's JSON envelope names, if it is well formed."""
    try:
        if message.get("headers", {}).get("task") != TASK:
            return None
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args, kwargs = json.loads(body)[:2]
        named = parse(args, kwargs)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None
    return named if isinstance(named, BlockMessage) else None


def _send(
    engine: Engine,
    league_id: int,
    block_ids: Iterable[int],
    send: Send,
    report: Pass,
    reason: str,
    *,
    not_since: dt.datetime,
) -> None:
    for block_id in block_ids:
        if repo.mark_queued(engine, block_id, not_since=not_since):
            send(BlockMessage.of(engine, league_id, block_id))
            report.sent(reason, block_id)


def advance(engine: Engine, league_id: int, send: Send, *, report: Pass | None = None) -> Pass:
    """Once a started league's blocks are all stored: add and queue its next round, or mark it finished.

    Deterministic and idempotent (:func:`workers.league.plan_next_round`): the worker that stores
    the last block of a round, any reconciliation pass and ``league run`` may call it at the same
    time. Each may see the round as its own to add, so only blocks never queued are sent: the
    compare-and-set on ``queued_at`` lets one of them send each block, once. A sender that died
    between the two leaves its blocks to the reconciliation's ``unqueued`` pass. A league not
    handed to the workers is left alone.
    """
    from workers.league import plan_next_round

    report = report or Pass()
    phase = repo.league_phase(engine, league_id)
    if phase == "finished":
        report.finished.append(league_id)
        return report
    if phase != "started":
        return report
    league = repo.league_by_id(engine, league_id)
    added = plan_next_round(engine, league)
    if added:
        waiting = [b.id for b in repo.claimable_blocks(engine, league_id)]
        _send(engine, league_id, waiting, send, report, "next_round", not_since=EPOCH)
    # Finished only on the rule's word from a read that saw every block stored: a block stored by
    # another worker since that read may call for a round this call has not planned.
    elif added == 0 and repo.finish_league(engine, league_id):
        report.finished.append(league_id)
        log.info("league %s is finished", league.name)
    return report


def reconcile(engine: Engine, send: Send, *, queued: set[int] | None, grace_s: float) -> Pass:
    """One pass over every started, unfinished league (see the module docstring)."""
    report = Pass()
    for league_id in repo.open_leagues(engine):
        reconcile_league(engine, league_id, send, queued=queued, grace_s=grace_s, report=report)
    return report


def reconcile_league(
    engine: Engine,
    league_id: int,
    send: Send,
    *,
    queued: set[int] | None,
    grace_s: float,
    report: Pass | None = None,
) -> Pass:
    """Reconcile one league: expired leases, waiting blocks with no message, the next round.

    ``queued``: the blocks that have a message in the broker (:func:`queued_block_ids`); ``None``
    when the broker cannot be read, and then only blocks never queued are sent.
    """
    report = report or Pass()
    now = _now()
    report.leagues += 1
    expired = repo.expire_leases(engine, league_id)
    report.expired += expired
    for block in expired:
        log.warning(
            "block %d: the lease of %s expired (attempt %d); queued again",
            block.id,
            block.claimed_by,
            block.attempts,
        )
    # No other reconciler expired these too: send them whatever queued_at says.
    again = [b.id for b in expired]
    _send(engine, league_id, again, send, report, "lease_expired", not_since=now + dt.timedelta(days=1))
    waiting = [b for b in repo.claimable_blocks(engine, league_id) if b.id not in again]
    missing = [b.id for b in waiting if queued is None or b.id not in queued]
    # An unreadable broker: only blocks never queued.
    not_since = now - dt.timedelta(seconds=grace_s) if queued is not None else EPOCH
    _send(engine, league_id, missing, send, report, "unqueued", not_since=not_since)
    if not waiting and not again and not repo.blocks_of(engine, league_id, ["running"]):
        advance(engine, league_id, send, report=report)
    progress = repo.last_progress(engine, league_id)
    if progress is not None and league_id not in report.finished:
        report.stalled_s = max(report.stalled_s, (now - progress).total_seconds())
    return report


class Reconciler:
    """The loop a worker runs in its main process: heartbeat, :func:`reconcile`, sweep (a thread)."""

    def __init__(
        self,
        name: str,
        *,
        engine: Engine,
        broker_url: str,
        send: Send,
        period_s: float,
        queue: str = QUEUE,
    ) -> None:
        self.name = name
        self.engine = engine
        self.broker_url = broker_url
        self.send = send
        self.period_s = max(0.2, period_s)
        self.queue = queue
        self.started_at = _now()
        self.passes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Reconciler:
        """Sweep what dead players left on this host, then reconcile every period in a thread."""
        lease.sweep()
        self._thread = threading.Thread(target=self._loop, name="sixnimmt-reconcile", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            self._stop.wait(self.period_s)

    def run_once(self) -> Pass | None:
        """One heartbeat and pass; errors (store or broker down) are logged and counted, not raised."""
        try:
            repo.heartbeat(self.engine, self.name, self.started_at)
            from workers.queue.routing import keep_alive

            keep_alive(self.name, broker_url=self.broker_url)
            report = reconcile(
                self.engine,
                self.send,
                queued=queued_block_ids(self.broker_url, self.queue, store=repo.store_id(self.engine)),
                grace_s=self.period_s,
            )
        except Exception as exc:
            metrics.RECONCILE_RUNS.labels("failed").inc()
            log.warning(
                "reconciliation pass failed: %s: %s", type(exc).__name__, " ".join(str(exc).split())[:300]
            )
            return None
        self.passes += 1
        metrics.RECONCILE_RUNS.labels("ok").inc()
        metrics.LEAGUES_OPEN.set(report.leagues)
        metrics.LEAGUE_STALLED_SECONDS.set(report.stalled_s)
        for reason, ids in report.queued.items():
            log.info("reconciliation queued %d blocks (%s): %s", len(ids), reason, ids[:20])
        if report.expired:
            lease.sweep()
        return report


def celery_send(message: BlockMessage) -> None:
    """Queue ``sixnimmt.play_block`` for ``message`` on the app's broker, routed to the worker that
    holds the block's bots warm if one does (:mod:`workers.queue.routing`), else to the shared queue."""
    from workers.queue import routing as warm_routing
    from workers.queue.tasks import engine, play_block

    try:
        queue = warm_routing.route(engine(), message.block)
    except Exception as exc:  # a preference only: any worker can play the block
        log.debug("block %d: no warm route (%s)", message.block, exc)
        queue = warm_routing.SHARED
    play_block.apply_async(
        message.args(), queue=queue, retry=True, retry_policy={"max_retries": 3, "interval_start": 0.5}
    )


_current: Reconciler | None = None


def start_for_worker(name: str) -> Reconciler:
    """Start this worker's reconciler (from the ``worker_ready`` signal); one per process."""
    global _current
    from referee.settings import load as load_settings
    from workers.store.engine import make_engine

    settings = load_settings()
    if _current is None:
        _current = Reconciler(
            name,
            engine=make_engine(),
            broker_url=settings.broker_url,
            send=celery_send,
            period_s=settings.reconcile_s,
        ).start()
    return _current


def release_on_shutdown(name: str, grace_s: float, stop: Callable[[], None]) -> threading.Timer:
    """After ``grace_s``, give back the blocks this worker (``name``) still plays, then ``stop()`` it.

    Started when the worker is told to stop (SIGTERM): a block that finishes in time is stored and
    acknowledged; one that does not is released for another worker at once rather than when its
    lease runs out.
    """

    def release() -> None:
        with contextlib.suppress(Exception):
            if _current is not None:
                released = repo.release_claims(_current.engine, name)
                if released:
                    log.warning("shutdown: released blocks %s after %.0f s", released, grace_s)
        stop()

    timer = threading.Timer(grace_s, release)
    timer.daemon = True
    timer.start()
    return timer


def stop_current() -> None:
    if _current is not None:
        _current.stop()


def elapsed_since(moment: dt.datetime | None) -> float | None:
    """Seconds from ``moment`` to now (``None`` stays ``None``)."""
    return None if moment is None else max(0.0, time.time() - moment.timestamp())
