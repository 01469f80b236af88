"""Reconciliation: a started league finishes with nobody watching it.

``league start`` hands a league to the workers (``leagues.started_at``). From then on every
``sixnimmt worker`` runs :class:`Reconciler` in its main process, one pass every
``SIXNIMMT_RECONCILE_S``, and each pass, for every started league not yet finished:

- gives back the blocks whose lease expired (their worker died, or lost the store) and queues
  them again;
- queues again the blocks that wait (pending, failed: neither claimed nor stored) and whose last
  message was sent longer than a grace period ago (:func:`grace_for`): a broker that restarted
  without persistence lost them, or a worker died with them in its own queue (a failed block
  waits the backlog's grace: the task that failed it has a retry of its own on the way, which a
  worker holds unacknowledged until its countdown is over, out of the broker's count);
- adds the next round of a league with a stopping rule once its round is stored, and marks a
  league finished once every block is stored (:func:`advance`, which the task that stores a
  block calls too: whoever stores the last block of a round adds the next);
- writes the worker's heartbeat (``league run`` warns when no worker has been seen for a while),
  and, when a lease expired, sweeps the directories that dead players left on this host.

The store is the truth: which blocks wait, and when each was last sent (``blocks.queued_at``).
The broker is never searched for a block's message; it is asked only, through kombu's public
API, how many messages wait in the store's queues, which sets the grace period: one period when
none does (the broker lost them, or the workers took them all), many periods otherwise (the
messages may all wait behind a backlog; the count cannot say whose they are). A re-sent block
that had a message after all costs nothing: a block is claimed under a lease and stored once,
and a message for a block stored already does nothing.

This module is logic only: what it sends goes through the ``send`` it is given (the worker's is
:func:`workers.queue.tasks.send_block`, wired by :mod:`workers.queue.worker`).

Several workers reconcile at once without a coordinator: expiring a lease is a locked update that
one of them wins, and a block is queued again only by the worker that moves its ``queued_at``
(a compare-and-set), at most once per grace period.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlalchemy import Engine

from workers import league as leagues
from workers import metrics
from workers.play import lease
from workers.queue import routing
from workers.queue.messages import BlockMessage
from workers.store import repo
from workers.store.repo.leagues import league_progress

log = logging.getLogger(__name__)

Send = Callable[[BlockMessage], object]
"""Queues one block: sends ``sixnimmt.play_block`` with the message's arguments to the broker."""

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
"""No ``queued_at`` is before it: ``not_since=EPOCH`` sends only blocks never queued."""

BACKLOG_PASSES = 20
"""A block waiting while the broker holds messages is sent again after this many reconciliation
periods (5 minutes by default): its message may wait behind others."""


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


def grace_for(period_s: float, *, messages: int | None) -> float:
    """How long a waiting block's message is trusted to be in the broker before it is sent again.

    ``messages``: how many messages the broker says wait in the store's queues
    (:func:`workers.queue.routing.waiting_messages`; ``None`` if it cannot say). None at all
    means a waiting block has no message left to wait for (a broker restarted without
    persistence; the workers took every message, and a block still waiting a period later lost
    its own, in a dead worker's queue, say): one period then. Otherwise the messages may all be
    there, behind a backlog: :data:`BACKLOG_PASSES` periods, so that a long queue is not filled
    with copies. (Not "fewer messages than blocks wait": a message a worker has taken but not yet
    claimed is in neither count's reach, and would send every waiting block again.)
    """
    if messages == 0:
        return period_s
    return BACKLOG_PASSES * period_s


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
    report = report or Pass()
    # The league's phase and one indexed probe for a block handed to the workers and not stored
    # yet, in one statement.
    phase, sent_left = league_progress(engine, league_id)
    if phase == "finished":
        report.finished.append(league_id)
        return report
    if phase != "started":
        return report
    if sent_left:
        # A block handed to the workers is still to be stored: no round can be added, nor the
        # league finished (whoever stores the last one calls this after its commit and finds none
        # left). One indexed probe, where reading every block of the league after every block
        # stored was the store's first bottleneck (docs/capacity.md). Blocks never sent (a round
        # whose sender died before sending it) take the whole path, which sends them once.
        return report
    league = repo.league_by_id(engine, league_id)
    added = leagues.plan_next_round(engine, league)
    if added:
        waiting = [b.id for b in repo.claimable_blocks(engine, league_id)]
        _send(engine, league_id, waiting, send, report, "next_round", not_since=EPOCH)
    # Finished only on the rule's word from a read that saw every block stored: a block stored by
    # another worker since that read may call for a round this call has not planned.
    elif added == 0 and repo.finish_league(engine, league_id):
        report.finished.append(league_id)
        log.info("league %s is finished", league.name)
    return report


def reconcile(engine: Engine, send: Send, *, grace_s: float, failed_grace_s: float | None = None) -> Pass:
    """One pass over every started, unfinished league (see the module docstring)."""
    report = Pass()
    for league_id in repo.open_leagues(engine):
        reconcile_league(
            engine, league_id, send, grace_s=grace_s, failed_grace_s=failed_grace_s, report=report
        )
    return report


def reconcile_league(
    engine: Engine,
    league_id: int,
    send: Send,
    *,
    grace_s: float,
    failed_grace_s: float | None = None,
    report: Pass | None = None,
) -> Pass:
    """Reconcile one league: expired leases, waiting blocks sent too long ago, the next round.

    ``grace_s``: a waiting block whose last message was sent at least this long ago (or never) is
    sent again (:func:`grace_for` says how long, from what the broker holds); a failed one once
    it was sent at least ``failed_grace_s`` ago (by default ``grace_s`` too).
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
    # The waiting blocks whose last message is older than their grace, marked in one statement.
    failed_grace = grace_s if failed_grace_s is None else failed_grace_s
    due, marked_at = repo.mark_waiting_queued(
        engine,
        league_id,
        {
            "pending": now - dt.timedelta(seconds=grace_s),
            "failed": now - dt.timedelta(seconds=failed_grace),
        },
        skip=again,
    )
    for sent, block_id in enumerate(due):
        try:
            send(BlockMessage.of(engine, league_id, block_id))
        except BaseException:
            # Not sent: due again at the next pass, as if never marked (the store permitting).
            with contextlib.suppress(Exception):
                repo.unmark_queued(engine, due[sent:], marked_at)
            raise
        report.sent("unqueued", block_id)
    if not repo.blocks_left(engine, league_id):
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
    ) -> None:
        self.name = name
        self.engine = engine
        self.broker_url = broker_url
        self.send = send
        self.period_s = max(0.2, period_s)
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
            routing.keep_alive(self.name, broker_url=self.broker_url)
            messages = routing.waiting_messages(self.broker_url)
            report = reconcile(
                self.engine,
                self.send,
                grace_s=grace_for(self.period_s, messages=messages),
                failed_grace_s=BACKLOG_PASSES * self.period_s,
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


def elapsed_since(moment: dt.datetime | None) -> float | None:
    """Seconds from ``moment`` to now (``None`` stays ``None``)."""
    return None if moment is None else max(0.0, time.time() - moment.timestamp())
