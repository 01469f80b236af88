"""A competition on PostgreSQL and Celery: ``competition run`` hands the season's ladder and then the
final to a real worker through Redis, as ``league run`` does, and the final finishes the competition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import pytest
from test_competitions import aid, own

from workers import competition
from workers.store import repo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

FAST = {"SIXNIMMT_LEASE_S": "5", "SIXNIMMT_LEASE_RENEW_S": "1", "SIXNIMMT_RECONCILE_S": "1"}


def _sixnimmt(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=tempfile.gettempdir(),
        timeout=600,
    )


def test_a_competition_runs_on_the_celery_workers(
    exclusive_machine: None,
    engine: Any,
    pg_url: str,
    redis_url: str,
    celery_workers: Callable[..., Any],
    store: Any,
) -> None:
    competition.create(
        engine, "cel", config={"hands": 1, "target": None}, table_size=2, submissions_per_day=1,
        active_per_account=1, final_top=2, final_until_confident=0.9, final_max_deals=6, placement=1,
        round_deals=1,
    )  # fmt: skip
    for who, bot in (("ana", "lowest"), ("bo", "highest"), ("cy", "heuristic")):
        own(engine, who, bot)
        competition.enter(engine, "cel", aid(engine, who))
    celery_workers("competition", database_url=pg_url, broker_url=redis_url, env=FAST)
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url, **FAST}
    ran = _sixnimmt("competition", "run", "cel", "--rounds", "1", "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["state"] == "season"
    season = repo.find_league(engine, "cel-season")
    assert repo.league_counts(engine, season.id)["matches"] > 0
    closed = _sixnimmt("competition", "close", "cel", "--json", env=env)
    assert closed.returncode == 0 and len(json.loads(closed.stdout)["final"]) == 2, closed.stderr
    ran = _sixnimmt("competition", "run", "cel", "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["state"] == "finished"
    final = repo.competition(engine, "cel")["final"]
    assert final["league"] == "cel-final" and all(row["games"] for row in final["standings"])
    # The season's ladder, stopped at the close, finishes once the blocks in play are stored.
    store.wait(lambda: repo.league_phase(engine, season.id) == "finished", 120, "the season to finish", 0.3)
