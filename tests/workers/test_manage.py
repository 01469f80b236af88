"""Housekeeping: ``league delete`` removes a league and what it stored, ``bot retire`` keeps a version
out of new leagues and in its old ones.

Real PostgreSQL and the ``sixnimmt`` command line (its bots sandboxed, as always).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import func, select

from workers import league as leagues
from workers.store import repo
from workers.store.schema import bot_versions, matches, transcripts

pytestmark = pytest.mark.slow

BOTS = ["random", "heuristic", "lowest", "highest"]


def sixnimmt(pg_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        env={**clean, "SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": ""},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("sixnimmt: error")]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def played(engine: Any, pg_url: str, name: str) -> repo.League:
    league = leagues.create(
        engine, name, BOTS, config={"hands": 1, "target": None}, table_size=4, deals=1, seed=3
    )
    done = sixnimmt(pg_url, "league", "run", name, "--local", "--processes", "1", "--json")
    assert done.returncode == 0, done.stderr
    return league


def count(engine: Any, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar() or 0)


def test_league_delete_removes_the_league_and_what_it_stored_and_keeps_the_bots(
    engine: Any, pg_url: str
) -> None:
    kept = played(engine, pg_url, "kept")
    played(engine, pg_url, "gone")
    before = (count(engine, matches), count(engine, transcripts), count(engine, bot_versions))

    asked = sixnimmt(pg_url, "league", "delete", "gone")  # not a terminal: --yes is required
    assert "add --yes" in one_error(asked)
    repo.find_league(engine, "gone")

    done = sixnimmt(pg_url, "league", "delete", "gone", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["league"] == "gone" and report["deleted"]
    assert report["removed"]["blocks"] == 1 and report["removed"]["matches"] == 4
    assert report["removed"]["transcripts"] == 4 and report["removed"]["entrants"] == 4
    with pytest.raises(repo.NotFoundError):
        repo.find_league(engine, "gone")
    assert (count(engine, matches), count(engine, transcripts)) == (before[0] - 4, before[1] - 4)
    assert count(engine, bot_versions) == before[2], "the bot versions stay"
    assert repo.league_counts(engine, kept.id)["matches"] == 4, "other leagues are untouched"
    assert "no league 'gone'" in one_error(sixnimmt(pg_url, "league", "delete", "gone", "--yes"))

    text = sixnimmt(pg_url, "league", "delete", "kept", "--yes")
    assert text.returncode == 0 and "league kept deleted: 1 blocks, 4 matches" in text.stdout, text.stderr


def test_league_delete_refuses_a_league_being_played(engine: Any, pg_url: str) -> None:
    league = leagues.create(
        engine, "busy", BOTS, config={"hands": 1, "target": None}, table_size=4, deals=1, seed=3
    )
    block = repo.blocks_of(engine, league.id)[0]
    assert repo.claim_block(engine, block.id, "host:1", lease_s=600) is not None
    error = one_error(sixnimmt(pg_url, "league", "delete", "busy", "--yes"))
    assert "league 'busy' is being played: block 0 by host:1" in error, error
    repo.find_league(engine, "busy")
    repo.release_claims(engine, "host:1")  # stopped: now it goes
    assert sixnimmt(pg_url, "league", "delete", "busy", "--yes").returncode == 0


def test_a_retired_version_enters_no_new_league_and_stays_in_its_old_ones(engine: Any, pg_url: str) -> None:
    old = played(engine, pg_url, "old")
    # A reference bot is stored under its game's name, as any other bot version.
    done = sixnimmt(pg_url, "bot", "retire", "classic/random@1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "ref": "classic/random@1",
        "retired": True,
        "changed": ["classic/random@1"],
    }
    again = sixnimmt(pg_url, "bot", "retire", "classic/random@1")
    assert again.returncode == 0 and "retired already" in again.stdout

    listed = json.loads(sixnimmt(pg_url, "bot", "list", "--json").stdout)
    assert {(r["name"], r["retired"]) for r in listed} >= {
        ("classic/random", True),
        ("classic/heuristic", False),
    }

    for args in (
        ["--bots", "random,heuristic,lowest,highest"],
        ["--bots", "classic/random@1,heuristic,lowest,highest"],
    ):
        refused = sixnimmt(pg_url, "league", "create", "new", *args, "-o", "hands=1", "-o", "target=None")
        assert "classic/random@1 is retired: a retired version enters no new league" in one_error(refused)
    with pytest.raises(repo.NotFoundError):
        repo.find_league(engine, "new")
    # Its old league keeps it: entrants, results, transcripts.
    assert "classic/random" in [v.bot for v in repo.find_league(engine, old.name).entrants]
    assert repo.league_counts(engine, old.id)["matches"] == 4
    assert len(repo.league_results(engine, old.id)) > 0

    back = sixnimmt(pg_url, "bot", "unretire", "classic/random")
    assert back.returncode == 0 and "classic/random@1: not retired any more" in back.stdout, back.stderr
    made = sixnimmt(
        pg_url, "league", "create", "new", "--bots", "random,heuristic,lowest,highest", "-o", "hands=1"
    )
    assert made.returncode == 0, made.stderr
    assert "no bot 'nobody'" in one_error(sixnimmt(pg_url, "bot", "retire", "nobody"))
