"""Ctrl-C on a local ``league run`` fails nothing; a stopped player leaves no directory behind.

A pool process told to stop (SIGTERM from ``league run``'s Ctrl-C) once raised ``SystemExit``,
which ``concurrent.futures`` catches as a task's result: the process then took the next queued
block and played it on the warm pool it had just removed, and the block was failed with
``FileNotFoundError`` on a warm directory. Now a stopped pool process kills its bots, removes its
directories and exits at once: its blocks go back to pending and the next ``league run`` finishes
the league.

No mocks: PostgreSQL, the ``sixnimmt`` command line and sandboxed bots as real processes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_for

from workers import league as leagues
from workers.store import repo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]


@pytest.fixture
def blocks_tmp(request: pytest.FixtureRequest) -> Path:
    # Short: the referee's Unix socket lives under it (a path of at most 107 bytes).
    path = Path(tempfile.mkdtemp(prefix="sxi-"))
    path.chmod(0o711)
    request.addfinalizer(lambda: shutil.rmtree(path, ignore_errors=True))
    return path


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_until(stream: Any, text: str) -> list[str]:
    """Lines of ``stream`` up to the first one holding ``text`` (fails at its end)."""
    lines: list[str] = []
    for line in stream:
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"{text!r} never printed: {''.join(lines)}")


def test_ctrl_c_on_a_local_run_fails_no_block_and_the_next_run_finishes(
    exclusive_machine: None, engine: Any, pg_url: str, blocks_tmp: Path
) -> None:
    league = leagues.create(
        engine, "stopped", BOTS, config={"hands": 40, "target": None}, table_size=4, deals=4, seed=4
    )
    env = {
        "SIXNIMMT_DATABASE_URL": pg_url,
        "SIXNIMMT_BROKER_URL": "",
        "TMPDIR": str(blocks_tmp),
        # One block a task: more tasks than processes, so one waits in the pool's call queue when
        # Ctrl-C comes (the one that was played on a removed warm pool).
        "SIXNIMMT_BLOCKS_AT_ONCE": "1",
    }
    run = _cli("league", "run", "stopped", "--local", "--processes", "1", "--json", env=env)
    assert run.stderr is not None
    said = _read_until(run.stderr, "local process")
    assert "Ctrl-C" in said[-1], said
    # Blocks are in play: one is claimed (the event), and the pool holds the next one queued.
    wait_for(lambda: repo.blocks_of(engine, league.id, ["running"]), 120, "a block in play", 0.05)
    run.send_signal(signal.SIGINT)
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 130, "".join(said) + err
    assert "FileNotFoundError" not in err and "Traceback" not in err, err
    after = repo.blocks_of(engine, league.id)
    assert not [b for b in after if b.status in ("failed", "running")], after
    assert not [p.name for p in blocks_tmp.iterdir()], "no block, bot or warm directory left"

    again = _cli("league", "run", "stopped", "--local", "--processes", "1", "--json", env=env)
    _out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert repo.league_phase(engine, league.id) == "finished"
    assert {b.status for b in repo.blocks_of(engine, league.id)} == {"done"}
    assert not [p.name for p in blocks_tmp.iterdir()]


def test_a_local_run_says_what_it_waits_for_and_plays_the_block_once_its_lease_is_over(
    exclusive_machine: None, engine: Any, pg_url: str, blocks_tmp: Path
) -> None:
    league = leagues.create(
        engine, "waits", BOTS, config={"hands": 1, "target": None}, table_size=4, deals=2, seed=6
    )
    first = repo.blocks_of(engine, league.id)[0]
    # A worker claimed it and is gone: nobody renews its lease, which runs out in 5 s.
    assert repo.claim_block(engine, first.id, "gone:1", lease_s=5) is not None
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": "", "TMPDIR": str(blocks_tmp)}
    run = _cli("league", "run", "waits", "--local", "--processes", "1", "--json", env=env)
    _out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert "waiting for block 0's lease (worker gone:1) to expire in ~" in err, err
    assert repo.league_phase(engine, league.id) == "finished"
    assert {b.status for b in repo.blocks_of(engine, league.id)} == {"done"}


def test_following_a_league_says_what_its_blocks_wait_for(engine: Any, pg_url: str, redis_url: str) -> None:
    from workers.bots import accounts

    league = leagues.create(
        engine, "follow", BOTS, config={"hands": 1, "target": None}, table_size=4, deals=2, seed=7
    )
    dead, remote = repo.blocks_of(engine, league.id)
    assert repo.claim_block(engine, dead.id, "gone:2", lease_s=20) is not None
    assert repo.claim_block(engine, remote.id, "alive:3", lease_s=600) is not None
    accounts.set_waiting(engine, remote.id, "waiting for remote bot alice to connect (gives up in 30 s)")
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url}
    follow = _cli("league", "run", "follow", env=env)
    assert follow.stderr is not None
    said = _read_until(follow.stderr, "waiting for block 0's lease (worker gone:2) to expire in ~")
    said += _read_until(follow.stderr, "block 1: waiting for remote bot alice to connect")
    follow.send_signal(signal.SIGINT)
    _out, err = follow.communicate(timeout=60)
    assert follow.returncode == 130, "".join(said) + err
    assert "not renewed for" in "".join(said)
