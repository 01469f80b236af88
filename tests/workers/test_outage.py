"""The database goes away in the middle of a league, and comes back: a clear error, and nothing lost.

The machine's shared PostgreSQL is never touched: the test runs its own cluster (``initdb`` in a
temporary directory, owned by the ``postgres`` user, on a free port), points a real ``celery
worker`` and the CLI at it, and crashes it (``pg_ctl stop -m immediate``) while blocks are being
played. While it is down, ``sixnimmt league status`` fails with one line naming the database and
exit status 2, and the worker retries its task (autoretry on ``OperationalError``) instead of
dropping the block. Once the cluster is back, every block is stored exactly once and every match
stored before the crash is still there, unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from workers import league as leagues
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]
TABLE = 4


def _cli(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIXNIMMT_DATABASE_URL": database_url}
    env.pop("SIXNIMMT_BROKER_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_database_outage_mid_league_loses_nothing(
    exclusive_machine: None,
    private_postgres: Any,
    redis_url: str,
    broker: Any,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    url = private_postgres.create_database("league")
    engine = make_engine(url)
    try:
        upgrade(engine)
        league = leagues.create(
            engine, "outage", BOTS, config={"hands": 2, "target": None}, table_size=TABLE, deals=8, seed=3
        )
        blocks = repo.blocks_of(engine, league.id)
        worker = celery_workers(
            "outage",
            database_url=url,
            broker_url=redis_url,
            # One block a message, so that some blocks are stored while others wait.
            env={"SIXNIMMT_VISIBILITY_TIMEOUT_S": "300", "SIXNIMMT_BLOCKS_AT_ONCE": "1"},
        )
        for message in broker.hand_over(engine, league).values():
            broker.send(message)

        # Crash the database while the league is under way: some blocks stored, one being played.
        def under_way() -> bool:
            done = repo.blocks_of(engine, league.id, ["done"])
            return len(done) >= 2 and len(done) < len(blocks) - 2 and len(worker.bot_processes()) >= TABLE

        store.wait(under_way, 120, "blocks stored and a block being played", 0.05)
        before = store.facts(engine, league.id)
        engine.dispose()
        private_postgres.stop("immediate")
        crashed_at = time.monotonic()
        stored_before = {k: v for k, v in before["digests"].items()}
        assert stored_before, "some matches were stored before the crash"

        # (a) The CLI says in one line which database it cannot reach, with exit status 2.
        status = _cli("league", "status", "outage", database_url=url)
        assert status.returncode == 2, status
        lines = status.stderr.strip().splitlines()
        assert len(lines) == 1, status.stderr
        assert "Traceback" not in status.stderr
        assert lines[0].startswith("sixnimmt: error: cannot reach")
        assert f"127.0.0.1:{private_postgres.port}/league" in lines[0]
        assert status.stdout == ""

        # (b) The worker retries the block it could not store or claim instead of dropping it.
        def retried() -> list[str]:
            return [
                line
                for outcomes in worker.task_outcomes().values()
                for line in outcomes
                if line.startswith("retry:") and "OperationalError" in line
            ]

        retries = store.wait(retried, 60, "the worker to retry a block on OperationalError", 0.2)
        assert worker.process.poll() is None, "the worker is still up"
        dropped = [
            line
            for outcomes in worker.task_outcomes().values()
            for line in outcomes
            if line.startswith("raised")
        ]
        assert not dropped, dropped
        # Down long enough for more than one retry of the same block.
        while time.monotonic() - crashed_at < 4:
            time.sleep(0.2)

        private_postgres.start()
        store.wait(
            lambda: len(repo.blocks_of(engine, league.id, ["done"])) == len(blocks),
            150,
            "every block to be stored after the database came back",
            0.3,
        )
        after = store.facts(engine, league.id)
        store.assert_once(after, table_size=TABLE)
        for key, digest in stored_before.items():
            assert after["digests"][key] == digest, f"match {key} changed"
            assert after["match_ids"][key] == before["match_ids"][key], f"match {key} was stored again"
        assert not [
            line
            for outcomes in worker.task_outcomes().values()
            for line in outcomes
            if line.startswith("raised")
        ]
        assert retries

        status = _cli("league", "status", "outage", "--json", database_url=url)
        assert status.returncode == 0, status.stderr
        assert f'"done": {len(blocks)}' in status.stdout
    finally:
        engine.dispose()
