"""Leases on SQLite and PostgreSQL, the reconciliation pass against a real Redis, and the sweep.

A claim holds a lease; while it is live nobody else may claim the block, and once it is over any
worker may. Every write of a claimed block names its claim (worker, attempt): a stale player
cannot renew, fail or store over the claim that took the block over. The reconciliation pass
queues exactly the blocks the store says wait unsent for longer than the grace period (one
period when the broker, asked through kombu's public API, holds fewer messages than blocks
wait) and those whose lease expired, adds the next round, finishes the league, and two
reconcilers at once send each block once; a copy of a message for a block claimed or stored
plays nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import Engine, update
from test_store import engine, make_league, played, version  # noqa: F401 - the store fixture on both databases

from workers.play import execute, lease
from workers.queue import reconcile, routing
from workers.queue.messages import BlockMessage
from workers.store import repo
from workers.store.schema import blocks


def _expire(store: Engine, block_id: int) -> None:
    """Move a lease into the past, as if its worker had stopped renewing it long ago."""
    with store.begin() as conn:
        conn.execute(
            update(blocks)
            .where(blocks.c.id == block_id)
            .values(lease_until=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        )


def test_a_live_lease_keeps_others_out_and_an_expired_one_lets_them_in(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[0]
    first = repo.claim_block(engine, block.id, "w1", lease_s=30)
    assert first is not None and first.claim == ("w1", 1) and first.status == "running"
    with pytest.raises(repo.LeaseHeldError, match="being played by w1"):
        repo.claim_block(engine, block.id, "w2", lease_s=30)
    with pytest.raises(repo.LeaseHeldError):  # the same worker name, another delivery
        repo.claim_block(engine, block.id, "w1", lease_s=30)
    assert repo.renew_lease(engine, block.id, first.claim, lease_s=30)

    _expire(engine, block.id)
    second = repo.claim_block(engine, block.id, "w2", lease_s=30)
    assert second is not None and second.claim == ("w2", 2)
    # The first claim is stale: it can neither renew, fail nor store the block.
    assert not repo.renew_lease(engine, block.id, first.claim, lease_s=30)
    repo.fail_block(engine, block.id, "stale", claim=first.claim)
    assert repo.get_block(engine, block.id).status == "running"
    assert repo.record_block(engine, block.id, played(block, league), claim=first.claim) is False
    assert repo.get_block(engine, block.id).status == "running"
    # The live claim stores it, once.
    assert repo.record_block(engine, block.id, played(block, league), claim=second.claim) is True
    assert repo.record_block(engine, block.id, played(block, league), claim=second.claim) is False
    done = repo.get_block(engine, block.id)
    assert (done.status, done.lease_until) == ("done", None)
    assert repo.claim_block(engine, block.id, "w3") is None


def test_released_and_failed_claims_are_claimable_at_once(engine: Engine) -> None:  # noqa: F811
    league = make_league(engine)
    a, b, c = repo.blocks_of(engine, league.id)
    repo.claim_block(engine, a.id, "local", lease_s=300)
    repo.claim_block(engine, b.id, "local", lease_s=300)
    claim_c = repo.claim_block(engine, c.id, "other", lease_s=300)
    assert claim_c is not None
    assert sorted(repo.release_claims(engine, "local", league_id=league.id)) == sorted([a.id, b.id])
    assert [x.status for x in repo.blocks_of(engine, league.id)] == ["pending", "pending", "running"]
    assert repo.claim_block(engine, a.id, "w2", lease_s=30) is not None
    repo.fail_block(engine, c.id, "referee died", claim=claim_c.claim)
    assert repo.claim_block(engine, c.id, "w2", lease_s=30) is not None


def _sent_ago(store: Engine, block_id: int, seconds: float) -> None:
    """Move a block's last message into the past, as if it had been sent ``seconds`` ago."""
    with store.begin() as conn:
        conn.execute(
            update(blocks)
            .where(blocks.c.id == block_id)
            .values(queued_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds))
        )


def test_reconciling_queues_what_the_store_says_waits_unsent_and_what_lost_its_lease(
    engine: Engine,  # noqa: F811
    broker: Any,
    redis_url: str,
) -> None:
    league = make_league(engine)
    a, b, c = repo.blocks_of(engine, league.id)
    sent: list[int] = []
    store = repo.store_id(engine)
    period = 60.0
    backlog = reconcile.BACKLOG_PASSES * period

    def send(message: BlockMessage) -> None:
        assert (message.store, message.league) == (store, league.id)
        broker.send(message)
        sent.append(message.block)

    def grace() -> float:
        return reconcile.grace_for(period, messages=routing.waiting_messages(redis_url))

    # Not started: the reconciliation leaves the league alone.
    assert reconcile.reconcile(engine, send, grace_s=0).leagues == 0
    repo.start_league(engine, league.id)
    claim_c = repo.claim_block(engine, c.id, "dead", lease_s=60)
    assert claim_c is not None
    # An empty broker: no waiting block has a message to wait for, one period's grace.
    assert routing.waiting_messages(redis_url) == 0
    assert grace() == period

    # Never sent: both waiting blocks go; c, claimed, does not.
    first = reconcile.reconcile(engine, send, grace_s=grace())
    assert first.queued == {"unqueued": [a.id, b.id]} and sent == [a.id, b.id]
    # The broker says (public API) that two messages wait: they may all be there, a backlog's grace.
    assert routing.waiting_messages(redis_url) == 2 and grace() == backlog
    # So it stays while some message waits, even fewer than the blocks: the count cannot tell a
    # lost message from one a worker has taken and not yet claimed its block for.
    assert reconcile.grace_for(period, messages=1) == backlog
    # A second reconciler right after sends nothing: the store says both were just sent.
    again = reconcile.reconcile(engine, send, grace_s=grace())
    assert again.queued == {} and sent == [a.id, b.id]
    # A block waiting longer than the backlog's grace is sent again, messages or not.
    _sent_ago(engine, a.id, backlog + 1)
    assert reconcile.reconcile(engine, send, grace_s=grace()).queued == {"unqueued": [a.id]}
    assert routing.waiting_messages(redis_url) == 3

    # The broker restarts empty: within a period of their last message nothing is sent again;
    # past it, every waiting block is, once.
    broker_client = redis.Redis.from_url(redis_url)
    broker_client.flushdb()
    assert grace() == period
    assert reconcile.reconcile(engine, send, grace_s=grace()).queued == {}
    _sent_ago(engine, a.id, period + 1)
    _sent_ago(engine, b.id, period + 1)
    assert reconcile.reconcile(engine, send, grace_s=grace()).queued == {"unqueued": [a.id, b.id]}
    assert reconcile.reconcile(engine, send, grace_s=grace()).queued == {}
    # Messages the broker holds count whoever they are for (another store's here): the grace is
    # the backlog's; a broker that cannot be asked gets the backlog's too.
    broker_client.flushdb()
    broker.send(BlockMessage("f" * 32, league.id, a.id))
    broker.send(BlockMessage("f" * 32, league.id, b.id))
    assert routing.waiting_messages(redis_url) == 2 and grace() == backlog
    assert routing.waiting_messages("redis://127.0.0.1:1/0") is None
    assert reconcile.grace_for(period, messages=None) == backlog

    # c's worker died: once its lease is over, c is given back and queued again.
    _expire(engine, c.id)
    expired = reconcile.reconcile(engine, send, grace_s=grace())
    assert expired.queued == {"lease_expired": [c.id]}
    assert [(x.id, x.claimed_by) for x in expired.expired] == [(c.id, "dead")]
    assert repo.get_block(engine, c.id).status == "pending"
    broker_client.close()


def test_a_failed_block_waits_the_backlog_grace(engine: Engine) -> None:  # noqa: F811
    """A failed block has a retry of its task on the way (held by a worker until its countdown is
    over, out of the broker's count): it is neither counted as waiting nor sent after one period."""
    league = make_league(engine)
    a, b, c = repo.blocks_of(engine, league.id)
    repo.start_league(engine, league.id)
    sent: list[int] = []
    claim_b = repo.claim_block(engine, b.id, "w", lease_s=30)
    assert claim_b is not None
    repo.fail_block(engine, b.id, "the store went away", claim=claim_b.claim)
    assert repo.get_block(engine, b.id).status == "failed"
    period, backlog = 15.0, reconcile.BACKLOG_PASSES * 15.0
    for block in repo.blocks_of(engine, league.id):
        _sent_ago(engine, block.id, period + 1)

    def run() -> dict[str, list[int]]:
        return reconcile.reconcile(
            engine, lambda m: sent.append(m.block), grace_s=period, failed_grace_s=backlog
        ).queued

    assert run() == {"unqueued": [a.id, c.id]} and sent == [a.id, c.id]
    _sent_ago(engine, b.id, backlog + 1)
    assert run() == {"unqueued": [b.id]}
    assert run() == {}


def test_a_message_for_a_block_claimed_or_stored_plays_nothing(engine: Engine) -> None:  # noqa: F811
    """What makes sending a block again harmless: the claim turns a copy into a no-op."""
    league = make_league(engine)
    a, b, _ = repo.blocks_of(engine, league.id)
    repo.start_league(engine, league.id)
    claim_a = repo.claim_block(engine, a.id, "live", lease_s=300)
    claim_b = repo.claim_block(engine, b.id, "w", lease_s=30)
    assert claim_a is not None and claim_b is not None
    assert repo.record_block(engine, b.id, played(b, league), claim=claim_b.claim)
    before = {x.id: x for x in repo.blocks_of(engine, league.id)}
    matches = repo.league_counts(engine, league.id)["matches"]

    # Neither starts a bot (none of these bots could run: their code is not Python).
    claimed = execute.claim_and_play(engine, a.id, worker="copy", sandbox=False)
    stored = execute.claim_and_play(engine, b.id, worker="copy", sandbox=False)
    assert (claimed.status, claimed.matches) == ("leased elsewhere", 0)
    assert (stored.status, stored.matches) == ("done already", 0)
    assert {x.id: x for x in repo.blocks_of(engine, league.id)} == before
    assert repo.league_counts(engine, league.id)["matches"] == matches


def test_the_last_block_of_a_league_finishes_it(engine: Engine, broker: Any) -> None:  # noqa: F811
    league = make_league(engine)
    repo.start_league(engine, league.id)
    for block in repo.blocks_of(engine, league.id):
        claim = repo.claim_block(engine, block.id, "w", lease_s=30)
        assert claim is not None
        repo.record_block(engine, block.id, played(block, league), claim=claim.claim)
        assert repo.league_phase(engine, league.id) == "started"
    report = reconcile.advance(engine, league.id, broker.send)
    assert report.finished == [league.id]
    assert repo.league_phase(engine, league.id) == "finished"
    assert repo.open_leagues(engine) == []
    assert reconcile.advance(engine, league.id, broker.send).finished == [league.id]


def test_runners_that_each_add_the_same_round_send_each_block_once(
    engine: Engine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker storing a round's last block, a reconciler and ``league run`` may each read the
    round as theirs to add (each saw every block stored before any added it): ``add_blocks`` stores
    it once, and of the runners only one sends each block, the others none."""
    from workers import league as league_module

    league = make_league(engine)
    repo.start_league(engine, league.id)
    # Every runner's plan_next_round answers as if it had added the round itself.
    monkeypatch.setattr(league_module, "plan_next_round", lambda store, lg: len(repo.blocks_of(store, lg.id)))
    sent: list[BlockMessage] = []
    reports = [reconcile.advance(engine, league.id, sent.append) for _ in range(3)]
    ids = [b.id for b in repo.blocks_of(engine, league.id)]
    assert reports[0].queued == {"next_round": ids}
    assert [r.queued for r in reports[1:]] == [{}, {}]
    assert sent == [BlockMessage(repo.store_id(engine), league.id, block_id) for block_id in ids]


def test_a_league_is_not_finished_by_a_runner_that_saw_a_block_still_in_play(
    engine: Engine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two workers store a round's last two blocks at once. The first reads the round while the
    other block is still in play, and that block is stored before it goes on: it must neither
    finish the league (the stored results call for another round) nor plan one. The second, which
    saw the round complete, plans the next round."""
    from workers.planning import adaptive

    versions = [version(engine, f"bot{i}", f"code{i}".encode()) for i in range(3)]
    repo.create_league(
        engine, "adaptive", variant="classic", config={"players": 2}, seed=5, format="round-robin",
        table_size=2, deals=1, entrants=versions, planned=[(0, 11, (0, 1)), (1, 12, (0, 2)), (2, 13, (1, 2))],
        stopping=adaptive.rule(0.95, 100).to_json(),
    )  # fmt: skip
    league = repo.find_league(engine, "adaptive")
    repo.start_league(engine, league.id)
    *first, last = repo.blocks_of(engine, league.id)
    for block in first:
        claim = repo.claim_block(engine, block.id, "w1", lease_s=30)
        assert claim is not None
        repo.record_block(engine, block.id, played(block, league), claim=claim.claim)
    other = repo.claim_block(engine, last.id, "w2", lease_s=30)
    assert other is not None

    read = repo.blocks_of

    def read_then_other_worker_stores(store: Engine, league_id: int, *args: Any) -> Any:
        seen = read(store, league_id, *args)
        if repo.get_block(store, last.id).status != "done":
            repo.record_block(store, last.id, played(last, league), claim=other.claim)
        return seen

    monkeypatch.setattr(repo, "blocks_of", read_then_other_worker_stores)
    sent: list[BlockMessage] = []
    report = reconcile.advance(engine, league.id, sent.append)
    assert report.finished == [] and report.queued == {} and sent == []
    assert repo.league_phase(engine, league.id) == "started"
    monkeypatch.setattr(repo, "blocks_of", read)
    report = reconcile.advance(engine, league.id, sent.append)
    assert report.finished == [] and report.queued["next_round"] == [m.block for m in sent] and sent
    assert len(repo.blocks_of(engine, league.id)) == 3 + len(sent)


def test_a_heartbeat_says_when_a_worker_was_last_seen(engine: Engine) -> None:  # noqa: F811
    assert repo.last_worker_seen(engine) is None
    started = dt.datetime.now(dt.UTC)
    repo.heartbeat(engine, "w1@host", started)
    first = repo.last_worker_seen(engine)
    assert first is not None and abs((first - started).total_seconds()) < 5
    time.sleep(0.05)
    repo.heartbeat(engine, "w1@host", started)
    later = repo.last_worker_seen(engine)
    assert later is not None and later > first


@pytest.fixture
def tmpdir_of_blocks(tmp_path: Path) -> Iterator[Path]:
    old = os.environ.get("TMPDIR")
    import tempfile

    os.environ["TMPDIR"] = str(tmp_path)
    tempfile.tempdir = None
    try:
        yield tmp_path
    finally:
        if old is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = old
        tempfile.tempdir = None


def test_the_sweep_removes_only_directories_of_dead_players(tmpdir_of_blocks: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    orphans = [
        tmpdir_of_blocks / (lease.BLOCK_DIR.format(block=7, pid=dead_pid) + "abc"),
        tmpdir_of_blocks / (lease.BOTS_DIR.format(block=7, pid=dead_pid) + "def"),
    ]
    for path in orphans:
        (path / "bot0" / "tmp").mkdir(parents=True)
        (path / "bot0" / "tmp" / "junk").write_text("x")
    unrelated = tmpdir_of_blocks / "sixnimmt-bot-unrelated"
    unrelated.mkdir()
    with lease.block_directories(8) as (files, bots):
        assert files.parent == bots.parent == tmpdir_of_blocks
        removed = lease.sweep()
        assert sorted(removed) == sorted(orphans)
        assert files.exists() and bots.exists(), "a live player's directories stay"
    assert not files.exists() and not bots.exists()
    assert unrelated.exists()
    assert lease.sweep() == []


def test_a_renewal_interval_that_cannot_keep_a_lease_is_refused() -> None:
    from referee.settings import SettingsError, load

    assert load({"SIXNIMMT_LEASE_S": "6", "SIXNIMMT_LEASE_RENEW_S": "1"}).lease_s == 6
    for bad in ({"SIXNIMMT_LEASE_S": "5", "SIXNIMMT_LEASE_RENEW_S": "5"}, {"SIXNIMMT_LEASE_RENEW_S": "0"}):
        with pytest.raises(SettingsError, match="SIXNIMMT_LEASE_RENEW_S"):
            load(bad)
    with pytest.raises(SettingsError, match="SIXNIMMT_RECONCILE_S"):
        load({"SIXNIMMT_RECONCILE_S": "0"})


def test_a_process_is_alive_until_it_exits_and_a_zombie_is_not() -> None:
    from workers import procs

    assert procs.alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while procs.alive(child.pid):  # exited but not reaped: a zombie owns nothing any more
        assert time.monotonic() < deadline, "the child neither ran nor became a zombie"
        time.sleep(0.05)
    assert child.poll() == 0  # reaped now: no such process at all
    assert not procs.alive(child.pid)
