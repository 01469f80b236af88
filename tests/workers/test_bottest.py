"""``sixnimmt bot test``: an SPRT test through the command line, stored like a league, bots sandboxed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from testkit import default_store, sixnimmt

from bot_sdk.cli import main
from workers.cli import bottest
from workers.planning import sprt
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import blocks, bot_versions, bots, leagues

ONE_HAND = ["-o", "target=None", "-o", "hands=1"]


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (bots, bot_versions, leagues, blocks)
        }


def test_a_clear_improvement_through_the_command_line(tmp_path: Path) -> None:
    """bot test → H1, stored as a league of format sprt; league run replays nothing; status agrees."""
    ran = sixnimmt(
        tmp_path, "bot", "test", "heuristic", "--base", "random", "--against", "lowest",
        "--margin", "1", "--processes", "2", "--seed", "3", *ONE_HAND, "--json",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    info = json.loads(ran.stdout)
    assert info["verdict"] == "H1" and info["llr"] == info["bounds"][1]
    assert (info["new"], info["base"]) == ("classic/heuristic@1", "classic/random@1")
    assert info["field"] == ["classic/lowest@1"]
    assert info["deals"] >= sprt.MIN_DEALS and info["deals"] % sprt.BATCH_DEALS == 0
    assert info["games"] == info["deals"] * 2 * 2  # two tables of two seats, every rotation
    assert len(info["path"]) == info["deals"] and info["finished"]
    assert info["mean_difference"] > 1.0  # fewer bull heads for NEW: positive means better

    engine = make_engine(f"sqlite:///{default_store(tmp_path)}")
    league = repo.find_league(engine, info["test"])
    assert league.format == "sprt" and bottest.is_test(league)
    assert league.stopping == {**sprt.Settings(margin=1.0).to_json()}
    names = [f"{v.bot}@{v.version}" for v in league.entrants]
    assert names == ["classic/heuristic@1", "classic/random@1", "classic/lowest@1"]
    stored = repo.blocks_of(engine, league.id)
    assert len(stored) == 2 * info["deals"] and all(b.status == "done" for b in stored)
    engine.dispose()

    again = sixnimmt(tmp_path, "league", "run", info["test"], "--json")
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["ran"] == {} and rerun["status"]["matches"] == info["games"]
    assert {k: rerun[k] for k in info} == info  # the same verdict from the same stored games
    status = sixnimmt(tmp_path, "league", "status", info["test"])
    assert "H1 accepted: classic/heuristic@1 is better than classic/random@1 by at least 1" in status.stdout


@pytest.fixture
def sqlite_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    for key in [k for k in os.environ if k.startswith("SIXNIMMT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", url)
    engine = make_engine(url)
    upgrade(engine)
    return engine


def test_league_run_resumes_a_stored_test(sqlite_store: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    """A test created but not played (a runner that stopped) is finished by ``league run``."""
    league = bottest.create(
        sqlite_store, "heuristic", "lowest", ["random"], name="resume", config={"target": None, "hands": 1},
        margin=1.0, max_deals=6,
    )  # fmt: skip
    assert [b.number for b in repo.blocks_of(sqlite_store, league.id)] == list(range(8))  # the first batch
    assert main(["league", "run", "resume", "--processes", "2", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["deals"] == 6 and info["verdict"] == "inconclusive" and info["finished"]
    assert info["games"] == 6 * 2 * 2 and len(repo.blocks_of(sqlite_store, league.id)) == 12
    assert main(["bot", "test", "heuristic", "--base", "lowest", "--name", "resume"]) == 2
    assert "exists already" in capsys.readouterr().err


BAD: list[tuple[list[str], str]] = [
    (["heuristic", "--base", "random", "--margin", "0"], "margin must be a positive"),
    (["heuristic", "--base", "random", "--margin", "-2"], "margin must be a positive"),
    (["heuristic", "--base", "random", "--alpha", "0"], "alpha must lie in (0, 0.5)"),
    (["heuristic", "--base", "random", "--beta", "0.5"], "beta must lie in (0, 0.5)"),
    (["heuristic", "--base", "random", "--max-deals", "0"], "max deals must be at least 1"),
    (["heuristic", "--base", "heuristic"], "NEW and OLD are the same bot version"),
    (["heuristic", "--base", "nope"], "no bot 'nope'"),
    (["nope", "--base", "heuristic"], "no bot 'nope'"),
    (["heuristic", "--base", "random", "--against", "lowest,nope"], "no bot 'nope'"),
    (["heuristic", "--base", "random", "--against", "lowest", "missing.py"], "unrecognized"),
    (["heuristic", "--base", "random", "--against", "lowest,missing.py"], "no bot file"),
    (["heuristic", "--base", "random", "--against", ","], "the field is empty"),
    (["heuristic", "--base", "random", "-o", "hands=0", "-o", "target=None"], "hands"),
    (["heuristic", "--base", "random", "--name", "no spaces please"], "bad league name"),
]


@pytest.mark.parametrize(("argv", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(
    sqlite_store: Engine, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        status = main(["bot", "test", *argv])
    except SystemExit as exc:  # argparse's own refusals
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert "Traceback" not in err
    assert counts(sqlite_store) == {"bots": 0, "bot_versions": 0, "leagues": 0, "blocks": 0}


def test_the_same_version_by_two_names_is_refused(
    sqlite_store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """heuristic and classic/heuristic@1 are one version once stored: refused, nothing more stored."""
    assert main(["bot", "test", "random", "--base", "lowest", "--max-deals", "1", "--against", "heuristic",
                 *ONE_HAND, "--json", "--processes", "1"]) == 0  # fmt: skip
    capsys.readouterr()
    before = counts(sqlite_store)
    assert main(["bot", "test", "heuristic", "--base", "classic/heuristic@1", "--against", "random"]) == 2
    assert "NEW and OLD are the same bot version" in capsys.readouterr().err
    assert counts(sqlite_store) == before


@pytest.mark.slow
@pytest.mark.xdist_group("celery-services")
def test_a_test_on_celery(
    tmp_path: Path,
    pg_url: str,
    redis_url: str,
    celery_workers: Callable[..., Any],
    exclusive_machine: None,
    store: Any,
) -> None:
    """The same command with a broker set: a real Celery worker plays the blocks, round after round."""
    worker = celery_workers("sprt", database_url=pg_url, broker_url=redis_url, concurrency=2)
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url}
    ran = sixnimmt(
        tmp_path, "bot", "test", "heuristic", "--base", "random", "--against", "lowest",
        "--margin", "1", "--seed", "3", *ONE_HAND, "--json", env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    info = json.loads(ran.stdout)
    assert info["verdict"] == "H1" and info["finished"]
    engine = make_engine(pg_url)
    try:
        league = repo.find_league(engine, info["test"])
        stored = repo.blocks_of(engine, league.id)
        assert len(stored) == 2 * info["deals"] and all(b.status == "done" for b in stored)
        store.assert_once(store.facts(engine, league.id), table_size=2)  # every block stored once
        # Played by the worker (no local pool with a broker set), each block by the message that
        # named it or beside another's (execute.play_with_pending); a block may be queued twice (the
        # run loop and the workers' reconciliation both queue new rounds): it is stored once.
        assert worker.claimed_all(stored), stored
        assert not worker.unsettled({b.id for b in stored if b.status == "done"})
    finally:
        engine.dispose()


def test_rerunning_an_undecided_test_extends_it_and_new_starts_a_fresh_one(
    sqlite_store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same test on the same bots, run again after it ran out of deals: more deals on the same
    test until the SPRT decides (never ``test-…-2``); ``--new`` starts a fresh one."""
    argv = ["bot", "test", "heuristic", "--base", "lowest", "--against", "random", "--margin", "1"]
    argv += ["--max-deals", "6", "--processes", "2", *ONE_HAND, "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["test"] == "test-heuristic-vs-lowest"
    assert (first["verdict"], first["deals"]) == ("inconclusive", 6)  # no decision before 16 deals

    assert main(argv) == 0
    out, err = capsys.readouterr()
    again = json.loads(out)
    assert "extending test test-heuristic-vs-lowest, undecided after 6 deals: up to 6 more deals" in err
    assert again["test"] == "test-heuristic-vs-lowest" and again["deals"] == 12
    assert again["settings"]["max_deals"] == 12 and again["finished"]
    assert again["path"][:6] == first["path"], "the first deals are the same stored games"
    assert [row["name"] for row in repo.list_leagues(sqlite_store)] == ["test-heuristic-vs-lowest"]

    assert main([*argv, "--new"]) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert (fresh["test"], fresh["deals"]) == ("test-heuristic-vs-lowest-2", 6)
    # Another field is another test: a fresh one, not an extension.
    assert main([*argv[:6], "highest", *argv[7:]]) == 0
    other = json.loads(capsys.readouterr().out)
    assert (other["test"], other["deals"]) == ("test-heuristic-vs-lowest-3", 6)
