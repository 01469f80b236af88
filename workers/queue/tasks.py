"""Celery tasks: ``play_block(block, league, store)``, retried with backoff on infrastructure errors
only, and :func:`send_block`, which sends one (the reconciliation's and ``league start``'s ``send``)."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from sqlalchemy.exc import OperationalError

from arena.matches import RefereeError
from referee.settings import load as load_settings
from workers.play import warm
from workers.play.execute import BlockError, BlockStatus, play_with_pending, worker_name
from workers.queue import messages, reconcile
from workers.queue import routing as warm_routing
from workers.queue.app import app
from workers.queue.messages import BlockMessage
from workers.store import repo
from workers.store.engine import StoreError, make_engine

log = logging.getLogger(__name__)

_engine: Any = None


def engine() -> Any:
    """One engine per worker process (created after the prefork)."""
    global _engine
    if _engine is None:
        _engine = make_engine()
    return _engine


@app.task(
    name="sixnimmt.play_block",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, StoreError, RefereeError, BlockError, OSError),
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=20,
)
def play_block(self: Any, *args: Any, **kwargs: Any) -> str:
    """Play and store the block a message names (:class:`workers.queue.messages.BlockMessage`), unless
    the message is refused (another store's, a league not started: ``refused``, acknowledged and
    dropped); a redelivered or duplicated task stores nothing twice."""
    message = messages.accept(engine(), args, kwargs)
    if message is None:
        return "refused"
    block_id = message.block
    worker = f"{self.request.hostname or worker_name()}"
    pool = warm.pool()
    # The block, and pending blocks of its league on the same warm bots as one set of matches.
    outcomes = play_with_pending(
        engine(), block_id, worker=worker, warm=pool, at_once=load_settings().blocks_at_once
    )
    outcome = outcomes[0]
    if pool is not None and self.request.hostname:
        # Where the next blocks of these bots should go (workers.queue.routing).
        warm_routing.publish(self.request.hostname, pool.warm_versions())
    if outcome.status == BlockStatus.LEASED_ELSEWHERE:
        # Being played under a live lease: look again once it would have run out. If its player
        # died (even an earlier run of this very task that could not record its failure), the
        # block is claimed then; if it lives, the block is stored and this copy does nothing.
        block = repo.get_block(engine(), block_id)
        left = (block.lease_until - dt.datetime.now(dt.UTC)).total_seconds() if block.lease_until else 0
        raise self.retry(
            exc=repo.LeaseHeldError(f"block {block_id} is leased"), countdown=max(1, min(60, left + 1))
        )
    if any(o.status == BlockStatus.STORED for o in outcomes):
        # Whoever stores the last block of a round adds the next one (the reconciliation would too).
        try:
            reconcile.advance(engine(), message.league, send_block)
        except Exception as exc:
            log.warning("block %d stored; the next round is left to the reconciliation: %s", block_id, exc)
    return outcome.status


def send_block(message: BlockMessage) -> None:
    """Queue ``sixnimmt.play_block`` for ``message`` on the app's broker, routed to the worker that
    holds the block's bots warm if one does (:mod:`workers.queue.routing`), else to the shared queue."""
    try:
        queue = warm_routing.route(engine(), message.block)
    except Exception as exc:  # a preference only: any worker can play the block
        log.debug("block %d: no warm route (%s)", message.block, exc)
        queue = warm_routing.SHARED
    play_block.apply_async(
        message.args(), queue=queue, retry=True, retry_policy={"max_retries": 3, "interval_start": 0.5}
    )
