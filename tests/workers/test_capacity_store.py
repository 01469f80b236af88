"""The store's cost per block and per reconciliation pass does not grow with the league (issue 34).

Found with ``bench/bench_capacity.py`` (docs/capacity.md): after every block it stored, a worker's
``advance`` read every block of the league (``plan_next_round``), and a reconciliation pass spent
one transaction per waiting block. These tests count the statements each sends on SQLite and
PostgreSQL, so a league of any size costs the same; what they decide is checked by
tests/workers/test_leases.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event
from test_store import engine, make_league, played  # noqa: F401 - the store fixture on both databases

from workers.queue import reconcile
from workers.queue.messages import BlockMessage
from workers.store import repo


@contextmanager
def statements(store: Engine) -> Iterator[list[str]]:
    """Every SQL statement ``store`` sends meanwhile (BEGIN/COMMIT and pings aside)."""
    seen: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.strip().upper() not in ("SELECT 1", "BEGIN", "BEGIN IMMEDIATE", "COMMIT"):
            seen.append(statement)

    event.listen(store, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(store, "before_cursor_execute", note)


def _store_one(store: Engine, league: repo.League, block: repo.BlockRow) -> None:
    claim = repo.claim_block(store, block.id, "w", lease_s=60)
    assert claim is not None
    assert repo.record_block(store, block.id, played(block, league), claim=claim.claim)


def test_advance_after_a_block_while_sent_blocks_wait_reads_no_block_list(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    repo.start_league(engine, league.id)
    first, *rest = repo.blocks_of(engine, league.id)
    for block in (first, *rest):  # league start sent them all
        assert repo.mark_queued(engine, block.id, not_since=reconcile.EPOCH)
    _store_one(engine, league, first)
    sent: list[BlockMessage] = []
    with statements(engine) as seen:
        report = reconcile.advance(engine, league.id, sent.append)
    assert report.queued == {} and report.finished == [] and sent == []
    # The league's phase and one probe for a block still to be stored, in one statement; no read
    # of every block.
    assert len(seen) == 1, seen
    assert "EXISTS" in seen[0].upper() and "LIMIT" in seen[0].upper()
    # The last block's advance still finishes the league.
    for block in rest:
        _store_one(engine, league, block)
    assert reconcile.advance(engine, league.id, sent.append).finished == [league.id]


def test_a_reconciliation_pass_marks_every_waiting_block_in_one_statement(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    repo.start_league(engine, league.id)
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    waiting = len(ids)
    assert waiting > 1
    sent: list[BlockMessage] = []
    with statements(engine) as seen:
        report = reconcile.reconcile_league(engine, league.id, sent.append, grace_s=60)
    assert report.queued == {"unqueued": ids}
    assert [m.block for m in sent] == ids
    marks = [s for s in seen if s.lstrip().upper().startswith("UPDATE BLOCKS SET QUEUED_AT")]
    assert len(marks) == 1, seen
    # Within the grace period nothing is sent again, still one statement.
    with statements(engine) as seen:
        again = reconcile.reconcile_league(engine, league.id, sent.append, grace_s=60)
    assert again.queued == {} and len(sent) == waiting
    assert len([s for s in seen if "QUEUED_AT" in s.upper() and s.lstrip().upper().startswith("UPDATE")]) == 1


def test_blocks_a_failed_send_left_unsent_are_due_at_the_next_pass(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    repo.start_league(engine, league.id)
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    sent: list[int] = []

    def broker_fails_after_one(message: BlockMessage) -> None:
        if sent:
            raise ConnectionError("the broker went away")
        sent.append(message.block)

    with pytest.raises(ConnectionError):
        reconcile.reconcile_league(engine, league.id, broker_fails_after_one, grace_s=3600)
    assert sent == ids[:1]
    later: list[BlockMessage] = []
    report = reconcile.reconcile_league(engine, league.id, later.append, grace_s=3600)
    # The one sent waits its grace; the others were never sent, so they go now.
    assert report.queued == {"unqueued": ids[1:]}


def test_the_last_pending_blocks_come_from_the_index_without_a_sort(pg_url: str) -> None:
    """``pending_blocks_beside`` (each message a warm worker takes) reads its few rows in index
    order on a league just created, before PostgreSQL has statistics on it: without the index of
    migration 0009 it read and sorted every pending block of the league."""
    from workers.store.engine import make_engine

    store = make_engine(pg_url)
    try:
        league = make_league(store)
        repo.add_blocks(store, league.id, [(n, n, [0, 1]) for n in range(3, 5000)])
        first = repo.blocks_of(store, league.id)[0]
        captured: list[tuple[str, Any]] = []

        def note(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
            captured.append((statement, parameters))

        event.listen(store, "before_cursor_execute", note)
        beside = repo.pending_blocks_beside(store, first.id, limit=16)
        event.remove(store, "before_cursor_execute", note)
        assert [b.number for b in beside] == list(range(4999, 4983, -1))
        ((query, parameters),) = [c for c in captured if "ORDER BY" in c[0].upper()]
        with store.connect() as conn:
            plan = [row[0] for row in conn.exec_driver_sql("EXPLAIN " + query, parameters)]
        assert not any("Sort" in line for line in plan), plan
    finally:
        store.dispose()


@contextmanager
def transactions(store: Engine) -> Iterator[list[str]]:
    """The transactions ``store`` begins meanwhile ("AUTOCOMMIT" for a statement alone)."""
    seen: list[str] = []

    def note(conn: Any) -> None:
        seen.append(str(conn.get_execution_options().get("isolation_level", "transaction")))

    event.listen(store, "begin", note)
    try:
        yield seen
    finally:
        event.remove(store, "begin", note)


def test_a_blocks_store_calls_are_seven_statements_and_on_postgresql_no_transaction(
    engine: Engine,  # noqa: F811
) -> None:
    """What a worker asks of the store for one block (bench/bench_capacity.py's phases): accept
    the message, the pending blocks beside it, claim, the league, renew, store, advance. 16
    statements in 9 transactions before, then 11 in one, then 8 (the results in one statement),
    now 7 (the league and its entrants in one); on PostgreSQL every statement is its own
    transaction now (no BEGIN and COMMIT or ROLLBACK round trips), the results' included: one
    statement for the block, its matches, seat results and transcripts."""
    from workers.queue import messages

    league = make_league(engine)
    repo.start_league(engine, league.id)
    first, *rest = repo.blocks_of(engine, league.id)
    for block in (first, *rest):
        assert repo.mark_queued(engine, block.id, not_since=reconcile.EPOCH)
    store = repo.store_id(engine)
    sent: list[BlockMessage] = []
    with statements(engine) as seen, transactions(engine) as begun:
        assert messages.accept(engine, (first.id, league.id, store), {}) is not None
        assert [b.number for b in repo.pending_blocks_beside(engine, first.id, limit=8)] == [2, 1]
        claim = repo.claim_block(engine, first.id, "w", lease_s=60)
        assert claim is not None and claim.attempts == 1 and claim.status == "running"
        assert repo.league_by_id(engine, league.id).id == league.id
        assert repo.renew_lease(engine, first.id, claim.claim, lease_s=60)
        assert repo.record_block(engine, first.id, played(first, league), claim=claim.claim)
        assert reconcile.advance(engine, league.id, sent.append).queued == {}
    if engine.dialect.name == "postgresql":
        assert len(seen) == 7, seen
        assert begun.count("transaction") == 0, begun
    else:  # SQLite inserts the matches one by one (to return their ids in order)
        assert len(seen) == 9 + len(played(first, league)), seen
    assert repo.get_block(engine, first.id).status == "done"


def test_a_read_outside_a_transaction_leaves_the_pooled_connection_transactional(pg_engine: Engine) -> None:
    """``reading`` takes a pooled connection out of its transaction for its block only: the next
    ``begin`` on the same connection is a transaction again, and rolls back."""
    from sqlalchemy import text

    from workers.store.engine import reading

    league = make_league(pg_engine)
    with reading(pg_engine) as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None and raw.autocommit
        assert conn.execute(text("SELECT count(*) FROM blocks")).scalar_one() == 3
    with pytest.raises(RuntimeError), pg_engine.begin() as conn:
        assert conn.connection.dbapi_connection is raw and not raw.autocommit
        conn.execute(text("UPDATE blocks SET status = 'failed' WHERE league_id = :l"), {"l": league.id})
        raise RuntimeError("rolled back")
    assert {b.status for b in repo.blocks_of(pg_engine, league.id)} == {"pending"}


def test_claims_racing_for_one_block_give_it_to_one(pg_engine: Engine) -> None:
    """Eight claims at once, each on a connection of its own: one wins (attempt 1), the others
    are told the block is leased; once stored, stores racing with the winner's store nothing."""
    league = make_league(pg_engine)
    block = repo.blocks_of(pg_engine, league.id)[0]
    start = threading.Barrier(8)
    won: list[repo.BlockRow] = []
    held: list[str] = []

    def claim(i: int) -> None:
        start.wait(60)
        try:
            row = repo.claim_block(pg_engine, block.id, f"w{i}", lease_s=60)
            assert row is not None
            won.append(row)
        except repo.LeaseHeldError as exc:
            held.append(str(exc))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(won) == 1 and len(held) == 7
    (row,) = won
    assert row.attempts == 1 and repo.get_block(pg_engine, block.id).claim == row.claim
    # A stale claim (attempt 0) stores nothing; the winner's stores once.
    stored = []
    stores = threading.Barrier(4)

    def store(claim: tuple[str, int]) -> None:
        stores.wait(60)
        stored.append(repo.record_block(pg_engine, block.id, played(block, league), claim=claim))

    racers = [threading.Thread(target=store, args=(c,)) for c in [row.claim] * 3 + [(row.claim[0], 0)]]
    for thread in racers:
        thread.start()
    for thread in racers:
        thread.join(120)
    assert sorted(stored) == [False, False, False, True]
    assert len(repo.league_results(pg_engine, league.id)) == len(played(block, league)) * 2


def test_a_claim_says_why_a_block_is_not_claimable_and_fences_the_one_before(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[0]
    with pytest.raises(repo.NotFoundError):
        repo.claim_block(engine, 10_000, "w", lease_s=60)
    with pytest.raises(repo.NotFoundError):
        repo.record_block(engine, 10_000, [], claim=("w", 1))
    first = repo.claim_block(engine, block.id, "w1", lease_s=-1)  # its lease is over at once
    assert first is not None and first.attempts == 1
    second = repo.claim_block(engine, block.id, "w2", lease_s=60)
    assert second is not None and second.claim == ("w2", 2)
    with pytest.raises(repo.LeaseHeldError, match="being played by w2"):
        repo.claim_block(engine, block.id, "w3", lease_s=60)
    assert not repo.renew_lease(engine, block.id, first.claim, lease_s=60)
    assert repo.record_block(engine, block.id, played(block, league), claim=first.claim) is False
    assert repo.record_block(engine, block.id, played(block, league), claim=second.claim) is True
    assert repo.claim_block(engine, block.id, "w3", lease_s=60) is None


def test_a_league_and_its_entrants_are_read_in_one_statement(engine: Engine) -> None:  # noqa: F811
    """``league_by_id`` and ``find_league`` read the league and its entrants in one statement: the
    entrants in position order with their versions as stored (a retired one marked so), a league
    with no entrants read whole, and no league a NotFoundError."""
    from test_store import version

    from workers.store.schema import league_entrants

    league = make_league(engine)
    repo.add_entrants(engine, league.id, [version(engine, "late", b"late code")])
    empty = make_league(engine, "empty")
    with engine.begin() as conn:  # a league whose entrants are all gone (none entered yet, say)
        conn.execute(league_entrants.delete().where(league_entrants.c.league_id == empty.id))
    repo.set_retired(engine, "bot1", True)
    with statements(engine) as seen:
        by_id = repo.league_by_id(engine, league.id)
    assert len(seen) == 1, seen
    assert by_id == repo.find_league(engine, "l")
    assert [(v.bot, v.version, v.retired) for v in by_id.entrants] == [
        ("bot0", 1, False),
        ("bot1", 1, True),
        ("bot2", 1, False),
        ("late", 1, False),
    ]
    assert [v.sha256 for v in by_id.entrants[:3]] == [v.sha256 for v in league.entrants]
    assert (by_id.config, by_id.seed, by_id.seat_key, by_id.table_size) == (
        {"players": 2},
        5,
        league.seat_key,
        2,
    )
    read = repo.league_by_id(engine, empty.id)
    assert read.entrants == () and read.name == "empty" and read.seat_key == empty.seat_key
    with pytest.raises(repo.NotFoundError, match="no league with id 999"):
        repo.league_by_id(engine, 999)
    with pytest.raises(repo.NotFoundError, match="no league 'nope'"):
        repo.find_league(engine, "nope")


def _bench_capacity() -> Any:
    """``bench/bench_capacity.py`` as a module (the bench directory is not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "bench_capacity.py"
    spec = importlib.util.spec_from_file_location("bench_capacity_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shape(sql: str) -> str:
    """A statement with its values taken out: parameters, pgbench variables and literals alike."""
    import re

    sql = re.sub(r"\(now\(\) \+ interval '60 s'\)|now\(\)", "?", sql)
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    sql = re.sub(r"%\(\w+\)s", "?", sql)
    sql = re.sub(r"(?<![:\w]):[a-z_]\w*", "?", sql)  # a pgbench variable, not a ::cast
    sql = re.sub(r"\b(?:\d+|false|true)\b", "?", sql)
    return " ".join(sql.split()).rstrip(";").strip()


def test_the_pgbench_script_is_a_workers_block_statement_for_statement(pg_url: str) -> None:
    """``store.pg_blocks_per_s``'s pgbench script sends what a worker sends for a block (the same
    seven statements in the same order, only their values written differently), and pgbench
    running it stores each block as a worker does: claimed once, its four matches, sixteen seat
    results and four transcripts."""
    from sqlalchemy import func, select

    from workers.store.engine import make_engine
    from workers.store.schema import blocks, matches, seat_results, transcripts

    bench = _bench_capacity()
    store = make_engine(pg_url)
    try:
        league_id = bench.make_league(store, "pgbench-shape", 3)
        script = bench.pgbench_script(store, league_id)
        lines = script.splitlines()
        assert lines[0] == "SELECT nextval('capacity_queue') AS b \\gset"  # the broker's part
        block = repo.blocks_of(store, league_id)[0]
        league = repo.league_by_id(store, league_id)
        store_id = repo.store_id(store)  # read once per engine, before the block
        from workers.queue import messages

        with statements(store) as seen:
            assert messages.accept(store, (block.id, league_id, store_id), {}) is not None
            repo.pending_blocks_beside(store, block.id, limit=128)
            claim = repo.claim_block(store, block.id, "w", lease_s=60)
            assert claim is not None
            repo.league_by_id(store, league_id)
            assert repo.renew_lease(store, block.id, claim.claim, lease_s=60)
            assert repo.record_block(store, block.id, bench.made_up(claim, league), claim=claim.claim)
            reconcile.advance(store, league_id, lambda message: None)
        assert len(seen) == 7
        assert [_shape(s.removesuffix("\\gset")) for s in lines[1:]] == [_shape(s) for s in seen]

        result = bench.store_pg_blocks_per_s(pg_url, 2, 0, transactions=3)
        assert result["blocks"] == 6 and result["blocks_per_s"] > 0
        with store.connect() as conn:
            done = conn.execute(
                select(blocks.c.status, blocks.c.attempts, blocks.c.claimed_by).where(
                    blocks.c.league_id == result["league_id"], blocks.c.status == "done"
                )
            ).all()
            counts = [
                conn.execute(
                    select(func.count())
                    .select_from(table)
                    .join(matches, matches.c.id == table.c.match_id)
                    .join(blocks, blocks.c.id == matches.c.block_id)
                    .where(blocks.c.league_id == result["league_id"])
                ).scalar_one()
                for table in (seat_results, transcripts)
            ]
            stored_matches = conn.execute(
                select(func.count())
                .select_from(matches)
                .join(blocks, blocks.c.id == matches.c.block_id)
                .where(blocks.c.league_id == result["league_id"])
            ).scalar_one()
        assert sorted(done) == [("done", 1, bench.WORKER)] * 6
        assert (stored_matches, *counts) == (24, 96, 24)
    finally:
        store.dispose()
