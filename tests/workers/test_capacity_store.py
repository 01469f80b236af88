"""The store's cost per block and per reconciliation pass does not grow with the league (issue 34).

Found with ``bench/bench_capacity.py`` (docs/capacity.md): after every block it stored, a worker's
``advance`` read every block of the league (``plan_next_round``), and a reconciliation pass spent
one transaction per waiting block. These tests count the statements each sends on SQLite and
PostgreSQL, so a league of any size costs the same; what they decide is checked by
tests/workers/test_leases.py.
"""

from __future__ import annotations

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
    # The league's phase and one probe for a block still to be stored; no read of every block.
    assert len(seen) == 2, seen
    assert "LIMIT" in seen[-1].upper()
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
