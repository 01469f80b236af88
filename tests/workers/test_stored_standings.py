"""The stored league table is written by whoever stores results, and read by everything else.

* a league handed to real Celery workers (``league start``) and finished by them, with no other
  command run, shows its standings on the dashboard's ``/api/leagues/ID``;
* a local run (``league run``) stores the table; ``league standings --method pl`` (or another
  confidence) shows its fit and leaves the stored table as it was;
* a table that covers fewer results never replaces the stored one.

No mocks: SQLite or PostgreSQL, Redis, ``celery worker`` processes and bots as real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from testkit import sixnimmt

from dashboard.app import create_app
from workers import league as leagues
from workers.stats.ratings import compute_ratings
from workers.store import repo, standings
from workers.store.engine import make_engine
from workers.store.schema import ratings as ratings_table

BOTS = ["random", "heuristic", "lowest", "highest"]
FAST = {
    "SIXNIMMT_LEASE_S": "5",
    "SIXNIMMT_LEASE_RENEW_S": "1",
    "SIXNIMMT_RECONCILE_S": "1",
    "SIXNIMMT_VISIBILITY_TIMEOUT_S": "600",
}


def _seat_results(engine: Any, league: repo.League) -> int:
    return len(repo.league_results(engine, league.id))


def _api_rows(url: str, league: repo.League) -> list[dict[str, Any]]:
    with TestClient(create_app(make_engine(url, read_only=True))) as client:
        response = client.get(f"/api/leagues/{league.id}")
        assert response.status_code == 200
        return list(response.json()["standings"]["rows"])


def _scores(rows: list[dict[str, Any]]) -> dict[int, float]:
    return {row["position"]: round(row["score"], 9) for row in rows}


@pytest.mark.slow
@pytest.mark.xdist_group("celery-services")
def test_a_league_finished_by_the_workers_shows_its_standings(
    exclusive_machine: None,
    pg_url: str,
    redis_url: str,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    engine = make_engine(pg_url)
    try:
        league = leagues.create(
            engine, "unwatched", BOTS, config={"hands": 2, "target": None}, table_size=4, deals=3, seed=5
        )
        started = subprocess.run(
            [sys.executable, "-m", "bot_sdk.cli", "league", "start", "unwatched"],
            env={**os.environ, "SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url, **FAST},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert started.returncode == 0, started.stderr
        celery_workers("unwatched", database_url=pg_url, broker_url=redis_url, env=FAST)
        store.wait(
            lambda: repo.league_phase(engine, league.id) == "finished", 180, "the league to finish", 0.2
        )
        rows = _api_rows(pg_url, league)
        assert len(rows) == len(BOTS)
        assert all(row["score"] is not None and row["method"] == "ls" for row in rows), rows
        # The table covers every stored result, and is the fit of them all.
        assert sum(row["games"] for row in rows) == _seat_results(engine, league)
        assert _scores(rows) == _scores(leagues.compute_table(engine, league)[0])
    finally:
        engine.dispose()


def test_a_local_run_stores_the_table_and_standings_only_read_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    env = {"SIXNIMMT_DATABASE_URL": url}
    for argv in (
        ["league", "create", "cup", "--bots", "random,heuristic,lowest", "--table", "3", "--deals", "3"],
        ["league", "run", "cup", "--processes", "1", "--json"],
    ):
        done = sixnimmt(tmp_path, *argv, *(["-o", "hands=1"] if argv[1] == "create" else []), env=env)
        assert done.returncode == 0, done.stderr
    engine = make_engine(url)
    try:
        league = repo.find_league(engine, "cup")
        stored = repo.load_ratings(engine, league.id)
        # The local run stored the headline table of every result.
        assert [row["method"] for row in stored] == ["ls"] * 3
        assert sum(row["games"] for row in stored) == _seat_results(engine, league)
        assert _scores(stored) == _scores(leagues.compute_table(engine, league)[0])
        assert _scores(_api_rows(url, league)) == _scores(stored)

        # Another method or confidence is shown, never stored over the headline.
        for extra in (["--method", "pl"], ["--confidence", "0.8"], []):
            shown = sixnimmt(tmp_path, "league", "standings", "cup", *extra, "--json", env=env)
            assert shown.returncode == 0, shown.stderr
            if extra[:1] == ["--method"]:
                assert json.loads(shown.stdout)["method"] == "pl"
            assert repo.load_ratings(engine, league.id) == stored, extra

        # Nothing to catch up: the stored table covers every result.
        assert not standings.results_stored(engine, league.id)
        assert not standings.refresh(engine, league)
        # A fit of fewer results (a writer that read before the last block) is refused.
        results = repo.league_results(engine, league.id)
        first = [r for r in results if r["block"] == results[0]["block"]]
        older, _ = compute_ratings(first, 3, higher_is_better=False)
        assert not standings._store(engine, league.id, older)
        assert repo.load_ratings(engine, league.id) == stored
        # Forced, the full fit is stored again, the same table.
        assert standings.refresh(engine, league, force=True)
        assert repo.load_ratings(engine, league.id) == stored
    finally:
        engine.dispose()


def test_a_process_looks_at_a_tables_age_at_most_every_so_often(tmp_path: Path) -> None:
    """After a block, one process refits a league's table at most once every
    ``SIXNIMMT_STANDINGS_EVERY_S``; a round's end (``results_stored``) always brings it up to date."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    env = {"SIXNIMMT_DATABASE_URL": url}
    for argv in (
        ["league", "create", "often", "--bots", "random,lowest,highest", "--table", "3", "--deals", "2"],
        ["league", "run", "often", "--processes", "1", "--json"],
    ):
        done = sixnimmt(tmp_path, *argv, *(["-o", "hands=1"] if argv[1] == "create" else []), env=env)
        assert done.returncode == 0, done.stderr
    engine = make_engine(url)
    try:
        league = repo.find_league(engine, "often")
        with engine.begin() as conn:  # the table falls behind: it forgets every result
            conn.execute(ratings_table.delete().where(ratings_table.c.league_id == league.id))
        assert standings.block_stored(engine, league.id, every_s=3600)  # first look: refit
        stored = repo.load_ratings(engine, league.id)
        assert sum(row["games"] for row in stored) == _seat_results(engine, league)
        with engine.begin() as conn:
            conn.execute(ratings_table.delete().where(ratings_table.c.league_id == league.id))
        assert not standings.block_stored(engine, league.id, every_s=3600)  # looked just now
        assert repo.load_ratings(engine, league.id) == []
        assert standings.block_stored(engine, league.id, every_s=0)  # no wait: refit
        assert repo.load_ratings(engine, league.id) == stored
        with engine.begin() as conn:
            conn.execute(ratings_table.delete().where(ratings_table.c.league_id == league.id))
        assert standings.results_stored(engine, league.id)  # a round's end never waits
        assert repo.load_ratings(engine, league.id) == stored
    finally:
        engine.dispose()
