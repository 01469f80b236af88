"""Blocks played by real ``celery worker`` processes on Redis and PostgreSQL: exactly once, whatever happens.

* a worker killed with SIGKILL (main process, pool process, referee thread, bots) in the middle of a
  block: Redis hands the unacknowledged block to the next worker after the visibility timeout, and
  the block is stored once, with the standings of a run where nothing went wrong;
* the same block delivered twice, at once and after it was stored: stored once.

Each league is started as ``league start`` starts it, but the test sends its messages itself
(``broker.hand_over``: the workers' reconciliation leaves them to it).

No mocks: PostgreSQL at 127.0.0.1:5432 (a fresh database per test), Redis at 127.0.0.1:6379 (a DB
of the test's own), workers started as ``python -m celery -A workers.queue.app worker`` with the bots in
the sandbox, as in production.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from workers import league as leagues
from workers.store import repo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]
TABLE = 4
VISIBILITY_S = 10
"""Short, so a killed worker's block comes back quickly; longer than a block takes to play."""


def _league(engine: Any, name: str, *, hands: int, deals: int, seed: int) -> repo.League:
    return leagues.create(
        engine, name, BOTS, config={"hands": hands, "target": None}, table_size=TABLE, deals=deals, seed=seed
    )


def _same_league(engine: Any, league: repo.League, name: str) -> repo.League:
    """Another league that plays exactly as ``league`` does: its seed, config and seat-seed key."""
    from sqlalchemy import update

    from workers.store.schema import leagues as leagues_table

    config = {k: v for k, v in league.config.items() if k != "players"}
    twin = leagues.create(
        engine, name, BOTS, config=config, table_size=TABLE, deals=league.deals, seed=league.seed
    )
    with engine.begin() as conn:
        conn.execute(
            update(leagues_table).where(leagues_table.c.id == twin.id).values(seat_key=league.seat_key)
        )
    return repo.find_league(engine, name)


def _done(engine: Any, league: repo.League) -> bool:
    return all(b.status == "done" for b in repo.blocks_of(engine, league.id))


def _running_with_bots(engine: Any, worker: Any, block_id: int) -> bool:
    """The block is claimed (``running``) in the store and its four bots are up under the worker."""
    block = repo.get_block(engine, block_id)
    if block.status == "done":
        raise AssertionError("the block finished before the worker could be killed; make blocks longer")
    return block.status == "running" and len(worker.bot_processes()) >= TABLE


def _bots_up_for(worker: Any, seconds: float) -> bool:
    """The worker's bots have all been running for ``seconds`` (from /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    bots = worker.bot_processes()
    try:
        with open("/proc/uptime") as f:
            now = float(f.read().split()[0])
        starts = []
        for pid in bots:
            with open(f"/proc/{pid}/stat") as f:
                starts.append(int(f.read().rsplit(")", 1)[1].split()[19]) / ticks)
    except OSError:  # a bot that just ended
        return False
    return len(starts) >= TABLE and all(now - start > seconds for start in starts)


def test_killed_worker_block_is_redelivered_and_stored_once(
    exclusive_machine: None,
    engine: Any,
    redis_url: str,
    pg_url: str,
    broker: Any,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    # The dead worker's lease runs out before Redis redelivers its message, so the redelivery
    # claims the block (a live lease would turn it away: the block is being played).
    env = {
        "SIXNIMMT_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
        "SIXNIMMT_LEASE_S": "5",
        "SIXNIMMT_LEASE_RENEW_S": "1",
    }
    league = _league(engine, "killed", hands=40, deals=3, seed=42)
    first, *rest = repo.blocks_of(engine, league.id)
    messages = broker.hand_over(engine, league)

    worker = celery_workers("doomed", database_url=pg_url, broker_url=redis_url, env=env)
    sent_at = time.monotonic()
    task = broker.send(messages[first.id])
    store.wait(lambda: _running_with_bots(engine, worker, first.id), 60, "the block to be played", 0.02)
    # In the middle of the block: let the bots get into their games (the block takes seconds).
    store.wait(lambda: _bots_up_for(worker, 0.5), 10, "the bots to be playing", 0.02)
    assert repo.get_block(engine, first.id).status == "running"
    bots = worker.bot_processes()
    killed = worker.kill()
    # The main process, its pool process and the bots (with their sandbox monitors) all die.
    assert {worker.pid, *bots} <= set(killed) and len(killed) >= 2 + TABLE, (killed, bots)
    store.wait(lambda: all(_zombie(p) or not _exists(p) for p in killed), 10, "the killed processes to die")
    # The store still says running: nothing of the block was written.
    facts = store.facts(engine, league.id)
    assert facts["blocks"][first.number] == ("running", 1)
    assert facts["matches"] == {}

    # The rest of the league goes to the queue; a new worker takes it and, once the visibility
    # timeout is over, the killed worker's block too.
    for block in rest:
        broker.send(messages[block.id])
    successor = celery_workers("successor", database_url=pg_url, broker_url=redis_url, env=env)
    store.wait(lambda: _done(engine, league), 120, "every block of the league to be stored", 0.2)
    assert time.monotonic() - sent_at >= VISIBILITY_S, "redelivered before the visibility timeout"

    facts = store.facts(engine, league.id)
    store.assert_once(facts, table_size=TABLE)
    assert facts["blocks"][first.number][1] >= 2, "the killed block was played again"
    for block in rest:
        assert facts["blocks"][block.number][1] >= 1

    # A clean run of the same league (same seed, same secret seat key) gives the same games and
    # the same standings.
    clean = _same_league(engine, league, "clean")
    for message in broker.hand_over(engine, clean).values():
        broker.send(message)
    store.wait(lambda: _done(engine, clean), 120, "the clean league to be stored", 0.2)
    clean_facts = store.facts(engine, clean.id)
    store.assert_once(clean_facts, table_size=TABLE)
    assert facts["digests"] == clean_facts["digests"]
    killed_rows = leagues.standings(engine, repo.find_league(engine, "killed"))
    clean_rows = leagues.standings(engine, repo.find_league(engine, "clean"))
    assert killed_rows == clean_rows
    # The new worker got the very task the killed one had taken, and the block is the new
    # worker's. It stored it by that message or, once the dead worker's lease ran out, beside
    # another block of the league (``execute.play_with_pending``; on a slow machine the other
    # blocks outlast the lease), and then the message finds it done (after finding it leased,
    # perhaps, while it was played).
    *before, last = successor.task_outcomes()[task]
    assert last in ("succeeded: 'stored'", "succeeded: 'done already'"), (before, last)
    assert all(run.startswith("retry: ") and "LeaseHeldError" in run for run in before), (before, last)
    assert successor.claimed_all([repo.get_block(engine, first.id)])


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_duplicated_delivery_stores_nothing_twice(
    engine: Any, redis_url: str, pg_url: str, broker: Any, celery_workers: Callable[..., Any], store: Any
) -> None:
    league = _league(engine, "twice", hands=2, deals=2, seed=7)
    a, b = repo.blocks_of(engine, league.id)
    messages = broker.hand_over(engine, league)
    # Two pool processes, so both copies of a block could be played at the same time; a short
    # lease, so a copy turned away looks again soon.
    lease = {"SIXNIMMT_LEASE_S": "5", "SIXNIMMT_LEASE_RENEW_S": "1"}
    worker = celery_workers("dup", database_url=pg_url, broker_url=redis_url, concurrency=2, env=lease)

    # The same block twice at once: one copy claims and plays it under a lease; the other finds
    # the lease live and looks again later, when the block is stored, and does nothing. The
    # block is never played twice at once.
    at_once = [broker.send(messages[a.id]), broker.send(messages[a.id])]

    def finished(tasks: list[str]) -> bool:
        outcomes = worker.task_outcomes()
        return all(t in outcomes and not outcomes[t][-1].startswith("retry") for t in tasks)

    store.wait(lambda: finished(at_once), 120, "both copies to finish", 0.2)
    outcomes = worker.task_outcomes()
    results = sorted(outcomes[t][-1] for t in at_once)
    attempts = repo.get_block(engine, a.id).attempts
    assert attempts == 1, outcomes
    assert results == ["succeeded: 'done already'", "succeeded: 'stored'"], outcomes

    # Once more after it was stored, and the other block twice in a row.
    later = [broker.send(messages[a.id]), broker.send(messages[b.id]), broker.send(messages[b.id])]
    store.wait(lambda: finished(later), 120, "the later copies to finish", 0.2)
    outcomes = worker.task_outcomes()
    assert outcomes[later[0]] == ["succeeded: 'done already'"]
    # Block b is played once: by one of its own copies, or beside a's copy, which finds a stored
    # and takes the pending block of its league on its warm bots (execute.play_with_pending).
    copies = [outcomes[t][-1] for t in later[1:]]
    assert copies.count("succeeded: 'stored'") <= 1 and set(copies) <= {
        "succeeded: 'stored'",
        "succeeded: 'done already'",
    }, outcomes
    assert repo.get_block(engine, b.id).attempts == 1

    facts = store.facts(engine, league.id)
    store.assert_once(facts, table_size=TABLE)
    assert facts["blocks"][a.number] == ("done", attempts), "the later copy claimed nothing"
    assert repo.league_counts(engine, league.id)["matches"] == 2 * TABLE
