"""Several blocks of a local pool process played as one set of matches on its warm bots.

Real sandboxed bot processes and the pool's own referee throughout; the sets are the real
``CreateMatches`` calls, counted as they go by.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, update
from testkit import migrated_store

from arena.matches import RefereeClient
from arena.tournament import Block
from workers import league as leagues
from workers.play import execute
from workers.play.execute import claim_and_play, play_blocks
from workers.play.warm import WarmPool
from workers.store import repo, schema

BOTS = Path(__file__).resolve().parent / "warm_bots"
ONE_HAND = {"hands": 1, "target": None}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with migrated_store("sqlite", tmp_path, "sets") as store:
        yield store


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many matches each ``CreateMatches`` call created (the real call, counted)."""
    made: list[int] = []
    create = RefereeClient.create_matches

    def counted(self: RefereeClient, variant: str, config: Any, plans: Any, **kw: Any) -> Any:
        made.append(len(plans))
        return create(self, variant, config, plans, **kw)

    monkeypatch.setattr(RefereeClient, "create_matches", counted)
    return made


def _results(engine: Engine, league_id: int) -> list[tuple[Any, ...]]:
    query = (
        select(schema.blocks.c.number, schema.matches.c.rotation, schema.matches.c.digest)
        .join(schema.matches, schema.matches.c.block_id == schema.blocks.c.id)
        .where(schema.blocks.c.league_id == league_id)
        .order_by(schema.blocks.c.number, schema.matches.c.rotation)
    )
    with engine.connect() as conn:
        digests = [tuple(row) for row in conn.execute(query)]
    scores = [
        (r["block"], r["rotation"], r["seat"], r["score"], r["faults"])
        for r in repo.league_results(engine, league_id)
    ]
    return [*digests, *scores]


def test_blocks_played_as_one_set_store_what_one_at_a_time_stores(engine: Engine, calls: list[int]) -> None:
    bots = ["random*2", "heuristic", "lowest", "highest"]  # two processes of one version at a table
    alone = leagues.create(engine, "alone", bots, config=ONE_HAND, deals=2, seed=5)
    sets = leagues.create(engine, "sets", bots, config=ONE_HAND, deals=2, seed=5)
    with engine.begin() as conn:
        conn.execute(
            update(schema.leagues).where(schema.leagues.c.id == sets.id).values(seat_key=alone.seat_key)
        )
    pool = WarmPool()
    try:
        for block in repo.blocks_of(engine, alone.id):
            assert claim_and_play(engine, block.id, warm=pool).status == "stored"
        assert calls == [4] * 10
        calls.clear()
        pool.decision_ms.clear()  # as a new pool process: nothing measured yet
        ids = [b.id for b in repo.blocks_of(engine, sets.id)]
        outcomes = play_blocks(engine, ids, warm=pool, at_once=4)
        assert [o.status for o in outcomes] == ["stored"] * 10
        # The first block alone (nothing measured), the next too (its fifth entrant was not at the
        # first table), then every entrant is measured and fast: a set of four blocks. (Later sets
        # may be smaller on a loaded machine: slower answers shrink them, as the gate intends.)
        assert calls[:3] == [4, 4, 16] and sum(calls) == 40, calls
        # A process per lane (rotation) of each entrant, each set on the same ones; and none of the
        # first league's: they played these very deals (same seed), each seat of them once.
        assert pool.started == 2 * 5 * 4, pool.started
        assert all(bot.process.poll() is None for bot in pool.bots)
    finally:
        pool.close()
    assert _results(engine, sets.id) == _results(engine, alone.id)
    assert len(repo.blocks_of(engine, sets.id, ["done"])) == 10


def test_a_block_claimed_while_a_set_plays_keeps_its_lease(
    engine: Engine, calls: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set can last longer than a lease: the block claimed next, waiting for it, keeps its own.

    The fifth block is claimed when the set of the 2nd to 4th is full, and waits for it (3 blocks x 4
    rotations x 3 hands x 10 cards of the paced bot at 15 ms: at least 5.4 s, with a lease of 3 s)
    before its own. A reconciler's pass runs all along, as another worker's would, giving back any
    lease that is over. (The paced bot queues too long to be shared under the real gate; the gate is
    not what this test is about.)
    """
    monkeypatch.setenv("SIXNIMMT_LEASE_S", "3")
    monkeypatch.setenv("SIXNIMMT_LEASE_RENEW_S", "1")
    monkeypatch.setattr(execute, "SHARE_QUEUE_MS", 60_000)
    paced = str(BOTS / "paced_bot.py")
    league = leagues.create(
        engine, "long", [paced, "random", "lowest", "highest"], config={"hands": 3, "target": None}, deals=5
    )
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    calls.clear()
    expired: list[int] = []
    stop = threading.Event()

    def reconciler() -> None:
        while not stop.wait(0.2):
            expired.extend(b.number for b in repo.expire_leases(engine, league.id))

    watcher = threading.Thread(target=reconciler)
    pool = WarmPool()
    watcher.start()
    try:
        outcomes = play_blocks(engine, ids, warm=pool, at_once=3)
    finally:
        stop.set()
        watcher.join()
        pool.close()
    assert calls == [4, 12, 4], calls  # the first alone (nothing measured), a set of 3, the fifth
    assert expired == [], f"blocks whose lease ran out while this worker held them: {expired}"
    assert [o.status for o in outcomes] == ["stored"] * 5
    assert all(b.attempts == 1 for b in repo.blocks_of(engine, league.id))


def test_a_bot_slow_to_answer_is_not_shared_by_blocks(engine: Engine) -> None:
    league = leagues.create(
        engine, "slow", ["random", "heuristic", "lowest", "highest"], config=ONE_HAND, deals=3
    )
    rows = repo.blocks_of(engine, league.id)
    blocks = [(row, Block(row.number, row.entrants, row.seed)) for row in rows]
    pool = WarmPool(sandbox=False)
    try:
        assert not execute._shareable(pool, league, blocks[:1]), "nothing measured yet"
        for version in league.entrants:
            pool.decision_ms[version.sha256] = 2.0
        assert execute._shareable(pool, league, blocks)  # 3 blocks x 1 game a lane x 2 ms
        pool.decision_ms[league.entrants[2].sha256] = 200.0  # 2 games a lane x 200 ms > 250 ms
        assert execute._shareable(pool, league, blocks[:1])
        assert not execute._shareable(pool, league, blocks[:2])
    finally:
        pool.close()
    fresh = leagues.create(
        engine,
        "fresh",
        ["random", "heuristic", "lowest", "highest"],
        config=ONE_HAND,
        deals=2,
        fresh_processes=True,
    )
    fresh_blocks = [(r, Block(r.number, r.entrants, r.seed)) for r in repo.blocks_of(engine, fresh.id)]
    pool = WarmPool(sandbox=False)
    try:
        for version in fresh.entrants:
            pool.decision_ms[version.sha256] = 1.0
        assert not execute._shareable(pool, fresh, fresh_blocks[:1]), "fresh processes: never shared"
    finally:
        pool.close()


def test_a_bot_that_crashes_in_a_set_faults_there_and_is_replaced(engine: Engine, calls: list[int]) -> None:
    crasher = str(BOTS / "third_block_crash.py")  # dies in its ninth game in one process
    league = leagues.create(
        engine, "crash", [crasher, "random", "lowest", "highest"], config=ONE_HAND, deals=9
    )
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    calls.clear()  # the entrant check of league create played its games
    pool = WarmPool()
    try:
        outcomes = play_blocks(engine, ids, warm=pool, at_once=4)
        assert [o.status for o in outcomes] == ["stored"] * 9
        # Block 1 alone, then blocks 2-5 and 6-9 as sets; each of the crasher's four lanes plays
        # one game a block, so each dies in the second set (its ninth game).
        assert calls == [4, 16, 16], calls
        assert [why for _, why in pool.retired] == ["retired"] * 4
        assert pool.started == 4 * 4
    finally:
        pool.close()
    results = repo.league_results(engine, league.id)
    numbers = sorted({r["block"] for r in results})
    crashed = {r["block"] for r in results if r["position"] == 0 and r["faults"]}
    assert crashed and crashed <= set(numbers[5:]), results  # in the second set, where its ninth game is
    assert not any(r["faults"] for r in results if r["position"] != 0)
    with engine.connect() as conn:
        details = [
            row.fault_detail
            for row in conn.execute(
                select(schema.seat_results.c.fault_detail).where(schema.seat_results.c.position == 0)
            )
            if row.fault_detail
        ]
    assert details and all('"status": 9' in d for d in details), details


def test_a_worker_plays_a_blocks_pending_neighbours_on_its_warm_bots_in_one_set(
    engine: Engine, calls: list[int]
) -> None:
    """What a Celery worker does with one ``play_block`` message (``execute.play_with_pending``)."""
    bots = ["random", "heuristic", "lowest", "highest"]
    league = leagues.create(engine, "beside", bots, config=ONE_HAND, deals=8, seed=3)
    other = leagues.create(engine, "other", ["random*4"], config=ONE_HAND, deals=2, seed=3)
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    pool = WarmPool()
    try:
        # Nothing warm, nothing measured: the block alone.
        assert [o.status for o in execute.play_with_pending(engine, ids[0], warm=pool, at_once=4)] == [
            "stored"
        ]
        assert calls == [4]
        # Another worker holds block 6 under a live lease: it is left alone; the others are taken
        # from the end of the league (their messages come last).
        repo.claim_block(engine, ids[6], "elsewhere:1", lease_s=600)
        outcomes = execute.play_with_pending(engine, ids[1], warm=pool, at_once=4)
        assert [(o.block_id, o.status) for o in outcomes] == [
            (i, "stored") for i in (ids[1], ids[7], ids[5], ids[4])
        ]
        assert calls[1:] == [16], "four blocks in one CreateMatches: one set"
        # Their own messages come later and find them stored; a worker that finds its block stored
        # still takes the pending ones beside it (blocks 3 and 2); the other league is never touched.
        outcomes = execute.play_with_pending(engine, ids[7], warm=pool, at_once=4)
        assert [(o.block_id, o.status) for o in outcomes] == [
            (ids[7], "done already"),
            (ids[3], "stored"),
            (ids[2], "stored"),
        ]
        assert repo.blocks_of(engine, other.id, ["done"]) == []
        # One at a time (SIXNIMMT_BLOCKS_AT_ONCE=1), a message plays its own block only.
        repo.release_claims(engine, "elsewhere:1", league_id=league.id)
        assert [o.block_id for o in execute.play_with_pending(engine, ids[6], warm=pool, at_once=1)] == [
            ids[6]
        ]
        assert calls[2:] == [8, 4], calls
        assert pool.started == 4 * 4  # a process per lane (rotation) of each entrant
    finally:
        pool.close()
    done = {b.id for b in repo.blocks_of(engine, league.id, ["done"])}
    assert done == set(ids)
