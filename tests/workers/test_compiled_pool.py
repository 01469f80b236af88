"""The league's processes take the referee's compiled hot path (referee.accel) like a referee does:
a local pool's processes choose it before their first block imports the driver."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from testkit import compiled_build, migrated_store

from referee import accel
from workers import league as leagues
from workers.store import repo

ONE_HAND = {"hands": 1, "target": None}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with migrated_store("sqlite", tmp_path, "compiled") as store:
        yield store


def test_a_pool_process_can_still_choose_the_build_when_it_starts() -> None:
    """The pool's initializer imports nothing of the compiled modules (a spawned process imports
    its initializer's module first)."""
    code = (
        "import sys, workers.play.process\n"
        "from referee import accel\n"
        "print(sorted(name for name in accel.MODULES if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_local_pool_plays_its_blocks_on_the_build(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``require`` a pool process that could not take the build would fail to start, and
    the run with it; this one stores every block."""
    compiled_build()
    monkeypatch.setenv("SIXNIMMT_COMPILED", "require")
    league = leagues.create(engine, "compiled", ["lowest", "highest"], table_size=2, deals=2, config=ONE_HAND)
    blocks = len(repo.blocks_of(engine, league.id))
    assert leagues.run_local(engine, league, processes=1) == {"stored": blocks}


def test_a_required_build_that_is_missing_stops_the_run_before_it_plays(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIXNIMMT_COMPILED", "require")
    monkeypatch.setenv("SIXNIMMT_COMPILED_DIR", str(tmp_path / "nothing"))
    league = leagues.create(engine, "compiled", ["lowest", "highest"], table_size=2, deals=1, config=ONE_HAND)
    missing = r"SIXNIMMT_COMPILED=require, but no build in .*make compiled"
    with pytest.raises(accel.CompiledError, match=missing):
        leagues.run_local(engine, league, processes=1)
    assert {b.status for b in repo.blocks_of(engine, league.id)} == {"pending"}
