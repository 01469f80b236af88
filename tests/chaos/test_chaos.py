"""Chaos on several hosts: a league on two worker hosts heals from each fault with no human action.

Each scenario runs a league on the harness's hosts (:mod:`harness`: the store and the broker on
one network namespace, two ``celery worker`` hosts on others, veth links between them), starts it
with ``league start`` (or follows it with ``league run``), injects one fault and then only waits.
It passes when the league is finished with exactly the planned matches, each stored once, and
the fault healed within its bound. ``chaos.<scenario>.recovery_s`` is the time from the fault's
end to the league's progress resuming where the fault had stopped it:

- ``kill9``: a worker killed with -9 mid-block → its block claimed again by a live worker;
- ``broker_restart``: Redis restarted without persistence (every message lost) → a block claimed;
- ``db_stop``: PostgreSQL stopped for 20 s → a block stored after it came back;
- ``link_cut``: one worker host's link down for 30 s → that host claims a block again;
- ``rolling``: SIGTERM to each worker in turn, each replaced → the replacement claims a block.

Run by ``make chaos`` (root and ``ip netns`` needed; a few minutes), which prints the bench lines.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from harness import Postgres, Redis, Worker, cluster, helpers, usable, wait_for
from sqlalchemy import func, select

from workers import league as leagues
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import blocks

_why_not = None if os.environ.get("SIXNIMMT_CHAOS") else "the chaos scenarios run with 'make chaos'"
_why_not = _why_not or usable()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not is not None, reason=str(_why_not))]

PACED = Path(__file__).resolve().parents[1] / "workers" / "warm_bots" / "paced_bot.py"
BOTS = ["random", "heuristic", "lowest", str(PACED)]
"""The paced bot (15 ms a card) at every table bounds how fast a league goes on any machine: each
scenario needs blocks left after its fault (with fast bots only, one CI machine's other host played
a whole league during a cut). A block of H hands is 4 rotations x 10 H of its cards, the rotations
played side by side (lanes: docs/league.md): >= 0.15 H s."""
TABLE = 4
SETTINGS = {
    "SIXNIMMT_LEASE_S": "6",
    "SIXNIMMT_LEASE_RENEW_S": "1",
    "SIXNIMMT_RECONCILE_S": "2",
    # Redis' redelivery of a dead worker's message never helps here: leases and reconciliation do.
    "SIXNIMMT_VISIBILITY_TIMEOUT_S": "3600",
    # Sets of four blocks, not the default 16: with 16, one worker claims a whole league of these
    # at once, and the link cut and the rolling restart leave no block for the other host to take.
    "SIXNIMMT_BLOCKS_AT_ONCE": "4",
}
BOUND_S = {"kill9": 20.0, "broker_restart": 45.0, "db_stop": 45.0, "link_cut": 60.0, "rolling": 30.0}
"""How soon each fault must heal: a lease, a reconciliation pass, reconnecting, and slack."""


@pytest.fixture(scope="module")
def hosts() -> Iterator[tuple[Any, Postgres, Redis]]:
    with cluster() as made:
        yield made


class Scenario:
    """One league on the hosts: its database, its workers, what the store says, the bench lines."""

    def __init__(
        self,
        name: str,
        made: tuple[Any, Postgres, Redis],
        logs: Path,
        *,
        deals: int,
        hands: int,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.settings = {**SETTINGS, **(settings or {})}
        self.hosts, self.postgres, self.broker = made
        self.logs = logs
        self.database = f"chaos_{name}"
        self.postgres.create_database(self.database)
        self.engine = make_engine(self.postgres.local_url(self.database))
        upgrade(self.engine)
        # Messages of an earlier scenario name blocks of another database: start empty.
        client = redis.Redis(unix_socket_path=str(self.broker.socket))
        client.flushall()
        client.close()
        self.league = leagues.create(
            self.engine,
            name,
            BOTS,
            config={"hands": hands, "target": None},
            table_size=TABLE,
            deals=deals,
            seed=sum(map(ord, name)),
        )
        self.workers: list[Worker] = []
        self.tmp: dict[int, Path] = {}
        self.recovery_s: float | None = None

    # -- processes ----------------------------------------------------------------------------

    def env(self, n: int) -> dict[str, str]:
        return {
            "SIXNIMMT_DATABASE_URL": self.postgres.url_for(n, self.database),
            "SIXNIMMT_BROKER_URL": self.broker.url_for(n),
            **self.settings,
        }

    def worker(self, n: int) -> Worker:
        """Start a worker on host ``n`` (a host keeps its temporary directory across restarts)."""
        index = sum(1 for w in self.workers if w.n == n) + 1
        worker = Worker(
            self.hosts, n, self.env(n), self.logs, f"{self.name}-w{n}-{index}", tmp=self.tmp.get(n)
        )
        self.tmp[n] = worker.tmp
        self.workers.append(worker)
        return worker.wait_ready()

    def cli(self, *args: str) -> subprocess.Popen[str]:
        env = {
            **os.environ,
            "SIXNIMMT_DATABASE_URL": self.postgres.local_url(self.database),
            "SIXNIMMT_BROKER_URL": self.broker.local_url(),
            **self.settings,
        }
        return subprocess.Popen(
            [sys.executable, "-m", "bot_sdk.cli", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def start(self) -> None:
        started = self.cli("league", "start", self.name)
        out, err = started.communicate(timeout=60)
        assert started.returncode == 0, err
        assert " queued, " in out

    def close(self) -> None:
        for worker in self.workers:
            worker.destroy()
        self.engine.dispose()

    # -- the store ----------------------------------------------------------------------------

    def blocks(self, status: str | None = None) -> list[repo.BlockRow]:
        return repo.blocks_of(self.engine, self.league.id, [status] if status else None)

    def playing(self, worker: Worker) -> repo.BlockRow | None:
        """The block ``worker`` has claimed, if its bots are up."""
        mine = [b for b in self.blocks("running") if (b.claimed_by or "").startswith(worker.name + "@")]
        bots = [p for p in helpers.descendants(worker.process.pid) if "bot_sdk.run" in helpers.cmdline(p)]
        return mine[0] if mine and len(bots) >= TABLE else None

    def latest(self, column: Any) -> dt.datetime | None:
        with self.engine.connect() as conn:
            value = conn.execute(
                select(func.max(column)).where(blocks.c.league_id == self.league.id)
            ).scalar()
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value

    def healed(self, condition: Callable[[], bool], fault_end: float) -> float:
        """Wait for ``condition``; the recovery time is from ``fault_end`` (``time.time()``)."""
        wait_for(condition, BOUND_S[self.name], f"{self.name} to heal", 0.1)
        self.recovery_s = max(0.0, time.time() - fault_end)
        return self.recovery_s

    def since(self, column: Any, fault_end: float) -> Callable[[], bool]:
        """A condition: some block's ``column`` (claimed_at, finished_at) is later than ``fault_end``."""

        def later() -> bool:
            moment = self.latest(column)
            return moment is not None and moment.timestamp() > fault_end

        return later

    def finished(self, timeout: float = 240) -> None:
        """The league finishes by itself, with every planned match stored once."""
        wait_for(
            lambda: repo.league_phase(self.engine, self.league.id) == "finished",
            timeout,
            f"league {self.name} to finish",
            0.3,
        )
        facts = helpers.store_facts(self.engine, self.league.id)
        helpers.assert_stored_once(facts, table_size=TABLE)
        assert len(facts["blocks"]) == len(self.blocks())


@pytest.fixture
def scenario(
    hosts: tuple[Any, Postgres, Redis], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Scenario]]:
    made: list[Scenario] = []

    def make(name: str, *, deals: int, hands: int = 2, settings: dict[str, str] | None = None) -> Scenario:
        made.append(Scenario(name, hosts, tmp_path, deals=deals, hands=hands, settings=settings))
        return made[-1]

    try:
        yield make
    finally:
        failed = getattr(request.node, "rep_call", None)
        ok = failed is not None and failed.passed
        for s in made:
            _bench(s.name, s.recovery_s, ok)
            if not ok:
                for worker in s.workers:
                    print(f"\n----- {worker.name} -----\n{worker.log()[-6000:]}")
            s.close()


def _bench(name: str, recovery_s: float | None, ok: bool) -> None:
    lines = [
        {
            "name": f"chaos.{name}.recovery_s",
            "value": round(recovery_s, 2) if recovery_s is not None else None,
            "unit": "s",
        },
        {"name": f"chaos.{name}.ok", "value": int(ok), "unit": "bool"},
    ]
    target = os.environ.get("SIXNIMMT_CHAOS_REPORT")
    if target:
        with open(target, "a") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")


# -- the scenarios ----------------------------------------------------------------------------------


def test_kill9_a_worker_mid_block(scenario: Callable[..., Scenario]) -> None:
    s = scenario("kill9", deals=8)
    w1, w2 = s.worker(1), s.worker(2)
    s.start()
    block = wait_for(lambda: s.playing(w1), 120, "worker 1 to be playing a block", 0.05)
    w1.kill9()
    fault_end = time.time()
    orphans = w1.leftovers()
    kinds = {name.split("-p")[0].rstrip("0123456789") for name in orphans}
    # A block of fresh bots leaves its block and bots directories; warm bots (workers.play.warm) live
    # in the pool's directory, named as block 0's.
    assert orphans and kinds <= {"sixnimmt-block", "sixnimmt-bots"}, (
        f"the killed worker left its block's directories: {orphans}"
    )
    s.healed(lambda: repo.get_block(s.engine, block.id).attempts > block.attempts, fault_end)
    # The host's worker comes back (as its supervisor would restart it) and sweeps the leftovers.
    back = s.worker(1)
    assert not set(orphans) & set(back.leftovers()), (orphans, back.leftovers())
    s.finished()
    assert w2.process.poll() is None


def test_broker_restart_loses_every_message(scenario: Callable[..., Scenario]) -> None:
    s = scenario("broker_restart", deals=8)
    s.worker(1), s.worker(2)
    s.start()
    wait_for(lambda: len(s.blocks("done")) >= 2, 120, "two blocks stored", 0.1)
    s.broker.kill()
    s.broker.start()
    fault_end = time.time()
    s.healed(s.since(blocks.c.claimed_at, fault_end), fault_end)
    s.finished()


def test_database_stopped_for_20_s(scenario: Callable[..., Scenario]) -> None:
    s = scenario("db_stop", deals=10)
    s.worker(1), s.worker(2)
    follow = s.cli("league", "run", "db_stop")  # league run: start and follow, retrying the store
    wait_for(lambda: len(s.blocks("done")) >= 2, 120, "two blocks stored", 0.1)
    s.engine.dispose()
    s.postgres.stop()
    time.sleep(20)
    s.postgres.start()
    fault_end = time.time()
    s.healed(s.since(blocks.c.finished_at, fault_end), fault_end)
    s.finished()
    out, err = follow.communicate(timeout=120)
    assert follow.returncode == 0, err
    assert "retrying in" in err, err
    assert "matches stored (Celery)" in out


def test_link_cut_for_30_s(scenario: Callable[..., Scenario]) -> None:
    # Blocks of at least 1.8 s (BOTS: 12 hands), one at a time: the other host plays at most 17 of
    # the 36 during the cut, and some are left for the cut host when its link comes back.
    s = scenario("link_cut", deals=36, hands=12, settings={"SIXNIMMT_BLOCKS_AT_ONCE": "1"})
    w1, w2 = s.worker(1), s.worker(2)
    s.start()
    block = wait_for(lambda: s.playing(w1), 120, "worker 1 to be playing a block", 0.05)
    s.hosts.set_link(1, up=False)
    time.sleep(30)
    s.hosts.set_link(1, up=True)
    fault_end = time.time()
    # The cut host's block was given back once its lease was over (the other host plays it when
    # its message comes up in the queue).
    assert repo.get_block(s.engine, block.id).claim != block.claim

    assert s.blocks("pending"), "blocks are left for the cut host when its link comes back"
    s.healed(lambda: w1.name + "@" in _claimers_since(s, fault_end), fault_end)
    s.finished()
    assert w1.process.poll() is None and w2.process.poll() is None


def _claimers_since(s: Scenario, moment: float) -> str:
    with s.engine.connect() as conn:
        rows = conn.execute(
            select(blocks.c.claimed_by, blocks.c.claimed_at).where(blocks.c.league_id == s.league.id)
        ).all()
    return " ".join(
        str(who)
        for who, at in rows
        if at is not None and (at if at.tzinfo else at.replace(tzinfo=dt.UTC)).timestamp() > moment
    )


def test_rolling_restart_with_sigterm(scenario: Callable[..., Scenario]) -> None:
    # Blocks of at least 1.8 s (BOTS): the other worker plays a few while one restarts, far from
    # the 30 of the league, so both restarts find their worker playing.
    s = scenario("rolling", deals=30, hands=3)
    s.worker(1), s.worker(2)
    s.start()
    wait_for(lambda: len(s.blocks("done")) >= 1, 120, "a block stored", 0.1)
    for n in (1, 2):
        old = next(w for w in reversed(s.workers) if w.n == n)
        wait_for(lambda old=old: s.playing(old), 60, f"worker {n} to be playing", 0.05)
        old.terminate()
        old.process.wait(60)  # its block finishes first (the grace period is 540 s)
        s.worker(n)
    fault_end = time.time()
    replacement = s.workers[-1]
    s.healed(
        lambda: (
            replacement.name + "@" in _claimers_since(s, fault_end)
            or repo.league_phase(s.engine, s.league.id) == "finished"
        ),
        fault_end,
    )
    s.finished()
    # Every block was played once: the stopped workers finished theirs rather than dropping them.
    assert all(b.attempts == 1 for b in s.blocks()), [(b.number, b.attempts) for b in s.blocks()]
