"""One process at a time looks at a league's stored table (issue 34, docs/capacity.md).

Every worker process used to refit the same league's table after its blocks, all at once: the
largest share of a busy store's time. Now, on PostgreSQL, a process holds an advisory lock on the
league while it counts and refits (``standings.refit_turn``): after a block, a process that finds
another one looking skips; at a round's end it waits its turn and then looks, so the table is
complete. Real PostgreSQL, the other looker a real process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text
from test_store import make_league, migrated_store, played
from testkit import wait_for

from workers.store import repo, standings

HOLDER = """
import sys
from workers.store.engine import make_engine
from workers.store import standings
engine = make_engine(sys.argv[1])
with standings.refit_turn(engine, int(sys.argv[2]), wait=False) as turn:
    print("holding" if turn else "refused", flush=True)
    sys.stdin.readline()
engine.dispose()
"""

RACER = """
import sys
from workers.store.engine import make_engine
from workers.store import standings
engine = make_engine(sys.argv[1])
engine.connect().close()
print("ready", flush=True)
sys.stdin.readline()
print(standings.results_stored(engine, int(sys.argv[2]), wait=False), flush=True)
engine.dispose()
"""


def _stored_league(engine: Engine, name: str = "l") -> repo.League:
    """A league whose blocks are all stored and whose table was never fitted."""
    league = make_league(engine, name)
    for block in repo.blocks_of(engine, league.id):
        claim = repo.claim_block(engine, block.id, "w", lease_s=60)
        assert claim is not None
        assert repo.record_block(engine, block.id, played(block, league), claim=claim.claim)
    return league


def _covered(engine: Engine, league: repo.League) -> int:
    return int(standings.coverage(engine, league.id)["covered"])


@contextmanager
def another_process_looking(url: str, league: repo.League) -> Iterator[subprocess.Popen[str]]:
    """A real process that holds the league's turn until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, str(league.id)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "holding"
        yield proc
        proc.stdin.write("done\n")
        proc.stdin.flush()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)


def _waiting_for_turn(engine: Engine, league: repo.League) -> int:
    """Backends waiting for the league's turn (pg_locks: a two-key advisory lock not granted)."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    " AND classid::bigint = :key AND objid::bigint = :league AND objsubid = 2"
                    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                ),
                {"key": standings.REFIT_LOCK, "league": league.id},
            ).scalar_one()
        )


def test_after_a_block_a_process_skips_while_another_looks_and_a_later_call_refits(
    engine: Engine, pg_url: str
) -> None:
    league = _stored_league(engine)
    results = len(repo.league_results(engine, league.id))
    with another_process_looking(pg_url, league):
        assert standings.results_stored(engine, league.id, wait=False) is False
        assert _covered(engine, league) == 0
        # The league's table is the only one taken: another league's is refitted meanwhile.
        other = _stored_league(engine, "other")
        assert standings.results_stored(engine, other.id, wait=False) is True
    assert standings.results_stored(engine, league.id, wait=False) is True
    assert _covered(engine, league) == results
    # Up to date: nothing to do.
    assert standings.results_stored(engine, league.id, wait=False) is False


def test_at_a_rounds_end_a_process_waits_its_turn_and_then_completes_the_table(
    engine: Engine, pg_url: str
) -> None:
    league = _stored_league(engine)
    results = len(repo.league_results(engine, league.id))
    outcome: list[bool] = []
    with another_process_looking(pg_url, league):
        waiter = threading.Thread(target=lambda: outcome.append(standings.results_stored(engine, league.id)))
        waiter.start()
        wait_for(
            lambda: _waiting_for_turn(engine, league) or not waiter.is_alive(), 120, "a wait for its turn"
        )
        assert waiter.is_alive(), "the round's end did not wait"
        assert outcome == [] and _covered(engine, league) == 0
    waiter.join(120)
    assert outcome == [True]
    assert _covered(engine, league) == results


def test_processes_racing_to_refit_refit_once(engine: Engine, pg_url: str) -> None:
    league = _stored_league(engine)
    results = len(repo.league_results(engine, league.id))
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, pg_url, str(league.id)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        for proc in racers:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in racers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        said = [proc.stdout.readline().strip() for proc in racers if proc.stdout is not None]
    finally:
        for proc in racers:
            if proc.stdin is not None:
                proc.stdin.close()
            if proc.wait(60) != 0:
                proc.kill()
    # Each other racer either found the turn taken or, after it, the table current.
    assert sorted(said) == ["False", "False", "False", "True"]
    assert _covered(engine, league) == results


def test_on_sqlite_every_caller_has_the_turn(tmp_path: Path) -> None:
    with migrated_store("sqlite", tmp_path, "sixnimmt_store") as store:
        league = _stored_league(store)
        with standings.refit_turn(store, league.id, wait=False) as turn:
            assert turn is True
        assert standings.results_stored(store, league.id, wait=False) is True
        assert _covered(store, league) == len(repo.league_results(store, league.id))
