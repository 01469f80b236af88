"""Blocks go to the Celery worker that holds their bots warm, and to another once it is gone.

Two real ``celery worker`` processes on Redis and PostgreSQL, bots sandboxed, as in production.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import update

from workers import league as leagues
from workers.queue import routing as warm_routing
from workers.store import repo
from workers.store.schema import blocks as blocks_table

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]
# One block per message: this is about where each message goes. A worker that plays the pending
# blocks beside its own (execute.play_with_pending) would have played them all at the first.
ENV = {"SIXNIMMT_WARM_ROUTE_S": "3", "SIXNIMMT_RECONCILE_S": "1", "SIXNIMMT_BLOCKS_AT_ONCE": "1"}


def _send(broker: Any, message: Any, queue: str) -> None:
    from workers.queue.tasks import play_block

    play_block.apply_async(message.args(), connection=broker.connection, queue=queue)


def _never_queued(engine: Any, block_ids: list[int]) -> None:
    """Leave these blocks to the reconciliation, as if nobody had sent their messages."""
    with engine.begin() as conn:
        conn.execute(update(blocks_table).where(blocks_table.c.id.in_(block_ids)).values(queued_at=None))


def _played_by(engine: Any, block_id: int, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while (block := repo.get_block(engine, block_id)).status != "done":
        assert time.monotonic() < deadline, f"block {block_id} not stored: {block}"
        time.sleep(0.05)
    assert block.claimed_by
    return block.claimed_by


def _live(redis_url: str) -> dict[str, set[str]]:
    client = warm_routing._client(redis_url)
    try:
        return warm_routing.live_workers(client)
    finally:
        client.close()


def test_blocks_prefer_the_warm_worker_and_fall_back_once_it_is_gone(
    engine: Any, pg_url: str, redis_url: str, celery_workers: Any, broker: Any
) -> None:
    workers = {
        name: celery_workers(name, database_url=pg_url, broker_url=redis_url, env=ENV)
        for name in ("warm-a", "warm-b")
    }
    league = leagues.create(engine, "routed", BOTS, config={"hands": 1, "target": None}, deals=7, seed=4)
    messages = broker.hand_over(engine, league)
    blocks = repo.blocks_of(engine, league.id)
    versions = warm_routing.block_versions(engine, blocks[0].id)
    assert len(versions) == 4
    assert warm_routing.queue_for(versions, broker_url=redis_url) == warm_routing.SHARED  # nobody is warm

    _send(broker, messages[blocks[0].id], warm_routing.SHARED)
    holder = _played_by(engine, blocks[0].id)
    deadline = time.monotonic() + 30
    while set(versions) - _live(redis_url).get(holder, set()):
        assert time.monotonic() < deadline, _live(redis_url)
        time.sleep(0.05)
    for block in blocks[1:4]:
        queue = warm_routing.queue_for(warm_routing.block_versions(engine, block.id), broker_url=redis_url)
        assert queue == warm_routing.worker_queue(holder)
        _send(broker, messages[block.id], queue)
        assert _played_by(engine, block.id) == holder
    time.sleep(4)  # longer than the set lives: the worker's main process keeps it alive while it runs
    assert warm_routing.queue_for(versions, broker_url=redis_url) == warm_routing.worker_queue(holder)

    # The warm worker dies: once its set is gone, blocks go to the shared queue and the other worker.
    (dead,) = [w for w in workers.values() if holder.startswith(f"{w.name}@")]
    (other,) = [w for w in workers.values() if w is not dead]
    dead.kill()
    deadline = time.monotonic() + 30
    while holder in _live(redis_url):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert warm_routing.queue_for(versions, broker_url=redis_url) == warm_routing.SHARED
    _send(broker, messages[blocks[4].id], warm_routing.SHARED)
    assert _played_by(engine, blocks[4].id).startswith(f"{other.name}@")

    # A block sent to the dead worker's own queue is not counted as queued: the reconciliation
    # of the live worker sends it again, and the live worker plays it (once the test leaves the
    # last two blocks to the reconciliation).
    _send(broker, messages[blocks[5].id], warm_routing.worker_queue(holder))
    _never_queued(engine, [blocks[5].id, blocks[6].id])
    assert _played_by(engine, blocks[5].id).startswith(f"{other.name}@")
    assert _played_by(engine, blocks[6].id).startswith(f"{other.name}@")
    facts = repo.league_counts(engine, league.id)
    assert facts["matches"] == 7 * 4, facts
