"""Warm bots: the pool's bounds and eviction, crashed bots replaced, and warm results equal to fresh.

Real processes throughout: the pool's bots are ``python -m bot_sdk.run`` processes (sandboxed
where a block plays them) connected to the pool's own referee with standing tokens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, update

from arena.matches import MatchPlan
from workers import league as leagues
from workers.play.execute import claim_and_play
from workers.play.warm import Version, WarmPool
from workers.store import repo, schema
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

BOTS = Path(__file__).resolve().parent / "warm_bots"
ONE_HAND = {"hands": 1, "target": None}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    try:
        yield store
    finally:
        store.dispose()


@pytest.fixture
def plain_pool() -> Iterator[WarmPool]:
    """A pool of unsandboxed bots (the bounds do not depend on the sandbox), closed after."""
    pool = WarmPool(max_bots=8, max_memory_mb=0, sandbox=False)
    try:
        yield pool
    finally:
        pool.close()


def _version(name: str) -> Version:
    return Version(name * 8, "random", "classic")


def _cycle(pool: WarmPool, name: str) -> Any:
    """Take a bot of version ``name`` (the reference random bot) and give it back healthy."""
    bot = pool.take(_version(name), "random", name)
    _play(pool, bot, name)
    pool.give_back(bot, reusable=True)
    return bot


def _play(pool: WarmPool, bot: Any, name: str) -> None:
    """One short game, all four seats the bot's, over its standing connection."""
    (match_id,), _ = pool.client.create_matches(
        "classic", ONE_HAND, [MatchPlan((name,) * 4, 1)], standing={name: bot.token}
    )
    assert pool.client.result(match_id, timeout=60).status == "finished"


def test_the_pool_keeps_at_most_its_count_least_recently_used_out(plain_pool: WarmPool) -> None:
    plain_pool.max_bots = 2
    a = _cycle(plain_pool, "a")
    b = _cycle(plain_pool, "b")
    assert _cycle(plain_pool, "a") is a  # a is warm: the same process, and now used last
    c = _cycle(plain_pool, "c")
    assert [bot.version for bot in plain_pool.bots] == [a.version, c.version]
    assert plain_pool.retired[-1] == (b.version, "evicted: more than 2 warm bots")
    assert b.process.wait(10) == 0  # told goodbye, it left cleanly
    assert a.process.poll() is None and c.process.poll() is None
    assert plain_pool.started == 3


def test_the_pool_keeps_its_bots_within_its_memory_bound(plain_pool: WarmPool) -> None:
    a = _cycle(plain_pool, "a")
    one = plain_pool.memory_mb()
    assert 5 < one < 500, one  # a Python bot process: tens of MiB resident
    assert 5 < plain_pool.memory_mb(max_age_s=0) < 500  # read again, not the reading of its give-back
    plain_pool.max_memory_mb = int(one * 1.5)
    b = _cycle(plain_pool, "b")
    assert [bot.version for bot in plain_pool.bots] == [b.version]
    assert plain_pool.retired[-1][1] == f"evicted: warm bots over {int(one * 1.5)} MB"
    assert a.process.wait(10) == 0
    # A busy bot is never evicted, even over the bound.
    plain_pool.max_memory_mb = 1
    busy = plain_pool.take(_version("b"), "random", "b")  # taken for a block
    assert busy is b
    _cycle(plain_pool, "c")
    assert plain_pool.bots == [b]
    plain_pool.give_back(b, reusable=True)
    assert plain_pool.bots == []


def test_a_bot_that_died_while_idle_or_faulted_is_replaced(plain_pool: WarmPool) -> None:
    a = _cycle(plain_pool, "a")
    a.process.kill()
    a.process.wait(10)
    again = plain_pool.take(_version("a"), "random", "a")
    assert again is not a and plain_pool.started == 2
    assert plain_pool.retired[-1] == (a.version, "exited while idle")
    _play(plain_pool, again, "a")
    exit = plain_pool.give_back(again, reusable=False)  # its seats faulted in the block
    assert exit is not None and exit.status == 0
    assert plain_pool.bots == []
    assert _cycle(plain_pool, "a") is not again


def _digests(engine: Engine, league_id: int) -> list[tuple[int, int, str]]:
    query = (
        select(schema.blocks.c.number, schema.matches.c.rotation, schema.matches.c.digest)
        .join(schema.matches, schema.matches.c.block_id == schema.blocks.c.id)
        .where(schema.blocks.c.league_id == league_id)
        .order_by(schema.blocks.c.number, schema.matches.c.rotation)
    )
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def _same_seat_key(engine: Engine, source: repo.League, target: repo.League) -> None:
    with engine.begin() as conn:
        conn.execute(
            update(schema.leagues).where(schema.leagues.c.id == target.id).values(seat_key=source.seat_key)
        )


def test_warm_blocks_store_what_fresh_processes_store(engine: Engine) -> None:
    """Stateless bots give the same games warm and fresh: same seeds, same digests and scores."""
    bots = ["random*2", "heuristic", "lowest", "highest"]  # two processes of one version at a table
    fresh = leagues.create(engine, "fresh", bots, config=ONE_HAND, deals=1, seed=5)
    warm_league = leagues.create(engine, "warm", bots, config=ONE_HAND, deals=1, seed=5)
    _same_seat_key(engine, fresh, warm_league)
    for block in repo.blocks_of(engine, fresh.id):
        assert claim_and_play(engine, block.id).status == "stored"
    pool = WarmPool()
    try:
        started = time.monotonic()
        for block in repo.blocks_of(engine, warm_league.id):
            assert claim_and_play(engine, block.id, warm=pool).status == "stored"
        warm_s = time.monotonic() - started
        assert pool.started == 5 * 4, "each entrant's lanes (one a rotation) started once, then kept warm"
        assert all(bot.process.poll() is None for bot in pool.bots)
    finally:
        pool.close()
    assert _digests(engine, warm_league.id) == _digests(engine, fresh.id)
    assert len(_digests(engine, fresh.id)) == 5 * 4
    scores = [
        (r["block"], r["rotation"], r["seat"], r["score"], r["faults"])
        for r in repo.league_results(engine, fresh.id)
    ]
    again = [
        (r["block"], r["rotation"], r["seat"], r["score"], r["faults"])
        for r in repo.league_results(engine, warm_league.id)
    ]
    assert scores == again
    assert warm_s < 30, warm_s


def test_a_warm_bot_that_crashes_is_replaced_and_its_seats_carry_its_exit(engine: Engine) -> None:
    crasher = str(BOTS / "third_block_crash.py")
    league = leagues.create(
        engine, "crash", [crasher, "random", "lowest", "highest"], config=ONE_HAND, deals=10
    )
    pool = WarmPool()
    try:
        for block in repo.blocks_of(engine, league.id):
            assert claim_and_play(engine, block.id, warm=pool).status == "stored"
        # Each of its four lanes (processes) plays one game a block: blocks 1-8 fine; block 9: each
        # dies (its ninth game); block 10: four new ones.
        assert pool.started == 4 * 4 + 4
        assert [why for _, why in pool.retired] == ["retired"] * 4
    finally:
        pool.close()
    results = repo.league_results(engine, league.id)
    crashed = {r["block"] for r in results if r["position"] == 0 and r["faults"]}
    assert crashed == {sorted({r["block"] for r in results})[8]}, results
    with engine.connect() as conn:
        details = [
            row.fault_detail
            for row in conn.execute(
                select(schema.seat_results.c.fault_detail).where(schema.seat_results.c.position == 0)
            )
            if row.fault_detail
        ]
    assert details and all('"status": 9' in d for d in details), details


def test_a_league_with_fresh_processes_never_plays_on_warm_bots(engine: Engine, plain_pool: WarmPool) -> None:
    bots = ["random", "heuristic", "lowest", "highest"]
    fresh = leagues.create(engine, "fresh", bots, config=ONE_HAND, deals=2, fresh_processes=True)
    assert repo.find_league(engine, "fresh").fresh_processes
    warm_league = leagues.create(engine, "warm", bots, config=ONE_HAND, deals=2)
    assert not warm_league.fresh_processes
    for block in repo.blocks_of(engine, fresh.id):
        assert claim_and_play(engine, block.id, warm=plain_pool).status == "stored"
    assert (plain_pool.started, plain_pool.bots) == (0, [])
    for block in repo.blocks_of(engine, warm_league.id):
        assert claim_and_play(engine, block.id, warm=plain_pool).status == "stored"
    assert plain_pool.started >= 4 * 4  # a process per lane: four entrants, four rotations


def test_league_create_takes_fresh_processes(tmp_path: Path) -> None:
    env = {**os.environ, "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    shown = {}
    for name, extra in (("fresh", ["--fresh-processes"]), ("warm", [])):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bot_sdk.cli",
                "league",
                "create",
                name,
                "--bots",
                "random*4",
                "--json",
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
        shown[name] = json.loads(out)["fresh_processes"]
    assert shown == {"fresh": True, "warm": False}
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot_sdk.cli",
            "league",
            "create",
            "x",
            "--bots",
            "random*4",
            "--fresh-processes=no",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2
    assert "--fresh-processes" in bad.stderr.strip().splitlines()[-1]
