"""Leagues handed to real Celery workers finish with nobody watching; following them is safe to stop.

* ``league start`` and no other process of ours: the workers' reconciliation finishes the league,
  even after the broker lost every queued message, and an adaptive league adds its rounds;
* ``league run`` with a broker and no worker says so; Ctrl-C stops following at once;
* Ctrl-C on a local ``league run`` cancels the queued blocks, releases the claims, leaves no
  directory behind and prints the standings so far;
* a player that loses its lease stops its bots and stores nothing;
* SIGTERM: a worker whose block outlasts the grace period releases it and stops.

No mocks: PostgreSQL, Redis, ``celery worker`` processes and bots as real processes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from arena.tournament import Block
from workers import league as leagues
from workers.planning import rounds
from workers.play.execute import claim_and_play
from workers.queue import routing, runner
from workers.store import repo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]
TABLE = 4
FAST = {
    "SIXNIMMT_LEASE_S": "5",
    "SIXNIMMT_LEASE_RENEW_S": "1",
    "SIXNIMMT_RECONCILE_S": "1",
    "SIXNIMMT_VISIBILITY_TIMEOUT_S": "600",
}
"""Short leases and passes, so recovery takes seconds; the visibility timeout never helps."""


def _cli(*args: str, env: dict[str, str], **kwargs: Any) -> Any:
    return subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _phase(engine: Any, league: repo.League) -> str:
    return repo.league_phase(engine, league.id)


def test_a_started_league_finishes_alone_even_when_the_broker_loses_its_messages(
    exclusive_machine: None,
    engine: Any,
    pg_url: str,
    redis_url: str,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url, **FAST}
    league = leagues.create(
        # Blocks and hands enough that blocks wait in the queue while one plays, warm bots and all.
        engine,
        "alone",
        BOTS,
        config={"hands": 20, "target": None},
        table_size=TABLE,
        deals=8,
        seed=9,
    )
    started = _cli("league", "start", "alone", env=env)
    out, err = started.communicate(timeout=60)
    assert started.returncode == 0, err
    assert "8 blocks queued" in out
    # Starting again queues nothing twice: every block has its message. (Before the worker
    # starts: a CLI on a loaded machine can take seconds, while the worker empties the queue.)
    again = _cli("league", "start", "alone", "--json", env=env)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0 and '"queued": 0' in out, (out, err)
    worker = celery_workers("alone", database_url=pg_url, broker_url=redis_url, env=FAST)

    # The broker loses everything queued (a restart without persistence) while a block is played.
    store.wait(
        lambda: len(repo.blocks_of(engine, league.id, ["running", "done"])) >= 1, 120, "a block claimed", 0.05
    )
    client = redis.Redis.from_url(redis_url)

    def lose_queued() -> int:
        # The shared queue and every worker's own one (warm routing: workers/queue/routing.py).
        queues = [q.decode() for q in client.keys("sixnimmt-blocks*") if client.type(q) == b"list"]
        if not queues:
            return 0
        with client.pipeline() as atomic:  # MULTI: what was there is what is deleted
            for queue in queues:
                atomic.llen(queue)
            atomic.delete(*queues)
            *waiting, _ = atomic.execute()
        return sum(int(w) for w in waiting)

    lost = store.wait(lose_queued, 60, "messages waiting in the queue, to lose them", 0.02)
    lost_at = time.monotonic()
    client.close()
    assert lost >= 1
    store.wait(lambda: _phase(engine, league) == "finished", 120, "the league to finish by itself", 0.2)
    recovery = time.monotonic() - lost_at
    store.assert_once(store.facts(engine, league.id), table_size=TABLE)
    assert "(unqueued)" in worker.log(), worker.log()[-3000:]
    assert recovery < 90


def test_an_adaptive_league_adds_its_rounds_under_league_start(
    exclusive_machine: None,
    engine: Any,
    pg_url: str,
    redis_url: str,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    from workers.planning import adaptive

    rule = adaptive.rule(0.99, 8).to_json()
    league = leagues.create(
        engine,
        "adaptive",
        ["random", "heuristic", "lowest", "highest"],
        config={"hands": 1, "target": None},
        table_size=2,
        seed=4,
        stopping=rule,
    )
    first_round = len(repo.blocks_of(engine, league.id))
    with _env({"SIXNIMMT_BROKER_URL": redis_url}):
        assert runner.start(engine, league) == first_round
    celery_workers("rounds", database_url=pg_url, broker_url=redis_url, env=FAST)
    store.wait(lambda: _phase(engine, league) == "finished", 180, "the adaptive league to finish", 0.3)
    planned = repo.blocks_of(engine, league.id)
    assert all(b.status == "done" for b in planned)
    state = adaptive.status(league, repo.league_results(engine, league.id), len(planned))["state"]
    assert state in ("settled", "budget spent"), state
    # The rounds are the ones the results call for, round after round: whoever added them (the
    # worker storing a round's last block, or a reconciliation pass), each was added once.
    results = repo.league_results(engine, league.id)
    replanned: list[Block] = []
    while new := rounds.next_blocks(league, [r for r in results if r["block"] < len(replanned)], replanned):
        replanned += new
        assert len(replanned) <= len(planned), "a round the results call for was not added"
    assert replanned == [Block(b.number, b.entrants, b.seed) for b in planned]
    assert len(planned) >= first_round


class _env:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        for key, value in self.values.items():
            self.saved[key] = os.environ.get(key)
            os.environ[key] = value

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_following_without_a_worker_says_so_and_ctrl_c_stops_at_once(
    engine: Any, pg_url: str, redis_url: str
) -> None:
    league = leagues.create(
        engine, "nobody", BOTS, config={"hands": 1, "target": None}, table_size=TABLE, deals=1, seed=2
    )
    said: list[str] = []
    with _env({"SIXNIMMT_BROKER_URL": redis_url}), pytest.raises(TimeoutError):
        runner.run_celery(engine, league, notify=said.append, no_worker_s=1, poll_s=0.1, timeout_s=2.5)
    assert any("no worker has been seen for ever" in line for line in said), said

    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url}
    follow = _cli("league", "run", "nobody", env=env)
    said_first = follow.stderr.readline()  # waits until the command follows the league
    assert "following league nobody on the workers (Ctrl-C stops following" in said_first, said_first
    assert follow.poll() is None, follow.communicate()
    interrupted = time.monotonic()
    follow.send_signal(signal.SIGINT)
    out, err = follow.communicate(timeout=30)
    assert time.monotonic() - interrupted < 5
    # 130; or, seldom, killed by the SIGINT itself (-2) when it lands once the command has returned
    # (in the interpreter's exit), after it said what it did: a Ctrl-C's status either way.
    assert follow.returncode in (130, -signal.SIGINT), err
    assert "stopped following league nobody: the workers go on" in said_first + err
    assert "Traceback" not in err
    assert follow.returncode != 130 or "no results stored yet" in out
    assert _phase(engine, league) == "started"


def test_ctrl_c_on_a_local_run_cancels_releases_and_prints_the_standings(
    exclusive_machine: None, request: pytest.FixtureRequest, engine: Any, pg_url: str
) -> None:
    league = leagues.create(
        engine, "local", BOTS, config={"hands": 3, "target": None}, table_size=TABLE, deals=8, seed=5
    )
    # Short: the referee's Unix socket lives under it (a path of at most 107 bytes).
    blocks_tmp = Path(tempfile.mkdtemp(prefix="sxn-"))
    blocks_tmp.chmod(0o711)
    request.addfinalizer(lambda: shutil.rmtree(blocks_tmp, ignore_errors=True))
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": "", "TMPDIR": str(blocks_tmp)}
    run = _cli("league", "run", "local", "--local", "--processes", "2", env=env)
    deadline = time.monotonic() + 120
    while len(repo.blocks_of(engine, league.id, ["done"])) < 2:
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.05)
    interrupted = time.monotonic()
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert time.monotonic() - interrupted < 12
    assert run.returncode == 130, err
    assert "queued blocks cancelled, claims released" in err
    assert "matches stored (local pool)" in out and "random@1" in out
    statuses = [b.status for b in repo.blocks_of(engine, league.id)]
    assert "running" not in statuses and statuses.count("done") < len(statuses), statuses
    assert not [p.name for p in blocks_tmp.iterdir()], "no block or bot directory left"


def test_a_player_that_loses_its_lease_stops_its_bots_and_stores_nothing(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIXNIMMT_LEASE_S", "4")
    monkeypatch.setenv("SIXNIMMT_LEASE_RENEW_S", "1")
    league = leagues.create(
        engine, "stolen", BOTS, config={"hands": 40, "target": None}, table_size=TABLE, deals=1, seed=3
    )
    block = repo.blocks_of(engine, league.id)[0]
    outcome: list[Any] = []
    player = threading.Thread(
        target=lambda: outcome.append(claim_and_play(engine, block.id, worker="slow", sandbox=False))
    )
    started = time.monotonic()
    player.start()
    deadline = time.monotonic() + 60
    while repo.get_block(engine, block.id).status != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # Another worker takes the block over (as after an expiry the player did not notice).
    repo.release_claims(engine, "slow")
    thief = repo.claim_block(engine, block.id, "thief", lease_s=60)
    assert thief is not None
    player.join(60)
    assert not player.is_alive()
    assert outcome[0].status == "lease lost"
    assert time.monotonic() - started < 30, "the bots were stopped, not played out"
    after = repo.get_block(engine, block.id)
    assert (after.status, after.claim) == ("running", ("thief", 2))
    assert repo.league_counts(engine, league.id)["matches"] == 0


def test_sigterm_past_the_grace_period_releases_the_block(
    exclusive_machine: None,
    engine: Any,
    pg_url: str,
    redis_url: str,
    broker: Any,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    league = leagues.create(
        engine, "long", BOTS, config={"hands": 200, "target": None}, table_size=TABLE, deals=1, seed=8
    )
    block = repo.blocks_of(engine, league.id)[0]
    message = broker.hand_over(engine, league)[block.id]
    worker = celery_workers(
        "graceful", database_url=pg_url, broker_url=redis_url, env={**FAST, "SIXNIMMT_SHUTDOWN_GRACE_S": "2"}
    )
    broker.send(message)
    store.wait(lambda: len(worker.bot_processes()) >= TABLE, 60, "the block to be played", 0.05)
    worker.process.send_signal(signal.SIGTERM)  # the main process only, as Kubernetes does
    # It stops by itself, long before a kubelet's kill: the 2 s grace, the release, a cold shutdown
    # that stops the pool process and its bots' lanes (17 s once on a loaded 2-core machine).
    # The event is its exit; wait() raises TimeoutExpired past the generous deadline.
    assert worker.process.wait(60) is not None
    after = repo.get_block(engine, block.id)
    assert after.status == "pending" and after.claimed_by is None, after
    assert "released blocks" in worker.log()
    # The broker still answers through kombu's public API (what the reconciliation asks it).
    assert routing.waiting_messages(redis_url) is not None
