"""Sampled leagues and ladders through the command line: real stores, sandboxed bots, real runners.

A ladder takes a new entrant while ``league run`` plays it, on the local pool with SQLite and on
Celery with Redis and PostgreSQL (real services, real worker processes): the newcomer's
placement tables open the first round planned after it came in, every round is stored once, and
the ladder ends at its budget or when stopped. Bad input is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from testkit import sixnimmt as run_cli
from testkit import wait_for

from arena.tournament import Block
from workers.planning import ladder
from workers.store import repo
from workers.store.engine import make_engine

PROJECT = Path(__file__).resolve().parents[2]
ONE_HAND = ["-o", "hands=1", "-o", "target=None"]
LADDER = ["--format", "ladder", "--table", "2", "--placement", "2", "--round-deals", "3", *ONE_HAND]


def sixnimmt(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(
        cwd, *args, env={"SIXNIMMT_DATABASE_URL": f"sqlite:///{cwd / 'sixnimmt.db'}", **(env or {})}
    )


def in_background(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``sixnimmt ARGS`` started and left running, with the environment :func:`sixnimmt` gives."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    full = {
        **clean,
        "XDG_DATA_HOME": str(cwd / "xdg-data"),
        "SIXNIMMT_DATABASE_URL": f"sqlite:///{cwd / 'sixnimmt.db'}",
        **(env or {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        cwd=cwd,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def one_line_refusal(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def stored_blocks(url: str, name: str) -> list[repo.BlockRow]:
    store = make_engine(url)
    try:
        return repo.blocks_of(store, repo.find_league(store, name).id)
    finally:
        store.dispose()


# --- sampled ------------------------------------------------------------------------------------


def test_a_sampled_league_plays_its_design_and_reports_its_balance(tmp_path: Path) -> None:
    made = sixnimmt(
        tmp_path, "league", "create", "fano", "--bots", "random*7", "--format", "sampled",
        "--table", "3", "--tables-per-bot", "3", "--deals", "1", *ONE_HAND, "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    info = json.loads(made.stdout)
    assert info["blocks"] == 7 and info["design"]["kind"] == "PG(2,2)"
    ran = sixnimmt(tmp_path, "league", "run", "fano", "--processes", "2", "--json")
    assert ran.returncode == 0, ran.stderr
    assert len(json.loads(ran.stdout)["standings"]) == 7
    state = json.loads(sixnimmt(tmp_path, "league", "status", "fano", "--json").stdout)
    assert state["blocks"] == {"done": 7}
    design = state["design"]
    assert design["tables_per_bot"] == {"min": 3, "max": 3}
    assert design["pair_meetings"] == {"min": 1, "max": 1, "mean": 1.0} and design["balanced"]
    text = sixnimmt(tmp_path, "league", "status", "fano").stdout
    assert "sampled: PG(2,2), 7 tables × 1 deals; tables per bot 3–3; every pair meets 1–1 times" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "sampled", "--table", "5", "--tables-per-bot", "5"], "a table of 5 needs at least 5"),
        (["--format", "swiss"], "unknown league format 'swiss'"),
        (
            ["--format", "sampled", "--table", "3", "--tables-per-bot", "2"],
            "need a multiple of 3 tables per bot",
        ),
        (["--format", "sampled"], "needs one of --tables-per-bot R or --tables B"),
        (["--format", "ladder", "--table", "5"], "the ladder starts with 4"),
    ],
)
def test_bad_formats_are_refused_in_one_line_and_store_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = sixnimmt(tmp_path, "league", "create", "bad", "--bots", "random,lowest,highest,heuristic", *args)
    one_line_refusal(done, message)
    assert not (tmp_path / "sixnimmt.db").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "round-robin", "tables_per_bot": 3}, "are for a sampled league"),
        ({"format": "gauntlet", "tables": 3}, "are for a sampled league"),
        ({"format": "round-robin", "placement": 3}, "are for a ladder"),
        ({"format": "sampled", "tables_per_bot": 3, "max_deals": 9}, "a sampled league is a fixed plan"),
        ({"format": "ladder", "placement": 0}, "--placement must be at least 1"),
        ({"format": "ladder", "round_deals": 0}, "--round-deals must be at least 1"),
        ({"format": "ladder", "until_confident": 0.3}, "between 0.5 and 1"),
    ],
)
def test_options_of_another_format_are_refused(options: dict[str, Any], message: str) -> None:
    from workers.cli.formats import create_options
    from workers.planning import PlanError

    given = {"tables_per_bot": None, "tables": None, "placement": None, "round_deals": None}
    given |= {"until_confident": None, "max_deals": None, **options}
    with pytest.raises(PlanError, match=message):
        create_options(argparse.Namespace(**given))


def test_ladder_and_sampled_options_become_the_league_s_settings() -> None:
    from workers.cli.formats import create_options

    given = {"tables_per_bot": None, "tables": None, "until_confident": None, "max_deals": 40}
    made = create_options(argparse.Namespace(format="ladder", placement=3, round_deals=5, **given))
    assert made == {"stopping": ladder.rule(3, 5, 40).to_json()}
    given = {"placement": None, "round_deals": None, "until_confident": None, "max_deals": None}
    assert create_options(argparse.Namespace(format="sampled", tables_per_bot=None, tables=6, **given)) == {
        "per_bot": None,
        "tables": 6,
    }


def test_a_taken_name_and_adding_to_a_league_that_is_not_a_ladder_are_refused(tmp_path: Path) -> None:
    bots = ["--bots", "random,lowest,highest"]
    assert sixnimmt(tmp_path, "league", "create", "cup", *bots, "--table", "2").returncode == 0
    one_line_refusal(sixnimmt(tmp_path, "league", "create", "cup", *bots, *LADDER), "exists already")
    one_line_refusal(
        sixnimmt(tmp_path, "league", "add", "cup", "heuristic"), "only a ladder takes new entrants"
    )
    one_line_refusal(sixnimmt(tmp_path, "league", "stop", "cup"), "only a ladder is stopped")
    one_line_refusal(sixnimmt(tmp_path, "league", "add", "nosuch", "heuristic"), "no league 'nosuch'")


# --- ladders ------------------------------------------------------------------------------------


def ladder_takes_a_newcomer(tmp_path: Path, url: str, env: Mapping[str, str] | None = None) -> None:
    """create → run in the background → add mid-run → placement played → stop; checks it all."""
    made = sixnimmt(  # a given seed: no deal key, the stored seeds are the plan's (checked below)
        tmp_path, "league", "create", "lad", "--bots", "random,lowest,highest", *LADDER, "--seed", "1",
        "--json", env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["blocks"] == 3  # placement: 3 bots × 2 tables / 2 seats
    runner = in_background(tmp_path, "league", "run", "lad", "--processes", "2", "--json", env=env)
    try:
        wait_for(
            lambda: sum(b.status == "done" for b in stored_blocks(url, "lad")) >= 3, 120, "the first round"
        )
        planned_before = len(stored_blocks(url, "lad"))  # no round planned by then can seat it
        added = sixnimmt(tmp_path, "league", "add", "lad", "heuristic", "--json", env=env)
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["added"] == [{"position": 3, "bot": "classic/heuristic@1"}]
        again = sixnimmt(tmp_path, "league", "add", "lad", "heuristic", env=env)
        one_line_refusal(again, "is in league 'lad' already")

        def placed() -> bool:
            return sum(b.status == "done" and 3 in b.entrants for b in stored_blocks(url, "lad")) >= 2

        wait_for(placed, 180, "the newcomer's placement")
        stopped = sixnimmt(tmp_path, "league", "stop", "lad", "--json", env=env)
        assert stopped.returncode == 0, stopped.stderr
        out, err = runner.communicate(timeout=300)
    finally:
        runner.kill()
    assert runner.returncode == 0, err
    assert len(json.loads(out)["standings"]) == 4, "the run's table has the newcomer"
    blocks = stored_blocks(url, "lad")
    assert all(b.status == "done" for b in blocks), "the blocks planned before the stop are played"
    theirs = [b.number for b in blocks if 3 in b.entrants]
    first = theirs[0]
    assert first >= planned_before and theirs[1] == first + 1, theirs
    # Rounds planned for three entrants, then for four from the round that placed the newcomer.
    assert all(b.seed == ladder._seed(1, 3 if b.number < first else 4, b.number) for b in blocks)
    state = json.loads(sixnimmt(tmp_path, "league", "status", "lad", "--json", env=env).stdout)
    assert state["ladder"]["state"] == "stopped" and state["ladder"]["in_placement"] == []
    assert state["ladder"]["entrants"] == 4 and state["blocks"] == {"done": len(blocks)}
    one_line_refusal(sixnimmt(tmp_path, "league", "add", "lad", "mc", env=env), "is finished (stopped)")
    ran = sixnimmt(tmp_path, "league", "run", "lad", "--json", env=env)
    assert ran.returncode == 0 and len(stored_blocks(url, "lad")) == len(blocks), (
        "a stopped ladder plans nothing"
    )


def test_a_ladder_takes_a_new_entrant_mid_run_on_the_local_pool(tmp_path: Path) -> None:
    ladder_takes_a_newcomer(tmp_path, f"sqlite:///{tmp_path / 'sixnimmt.db'}")


def test_a_ladder_with_a_budget_ends_there(tmp_path: Path) -> None:
    made = sixnimmt(
        tmp_path, "league", "create", "short", "--bots", "random,lowest,highest", *LADDER, "--max-deals", "5"
    )
    assert made.returncode == 0, made.stderr
    assert "ladder: running; 3 entrants, 3 deals planned (2 of 5 left)" in made.stdout
    ran = sixnimmt(tmp_path, "league", "run", "short", "--processes", "2", "--json")
    assert ran.returncode == 0, ran.stderr
    state = json.loads(sixnimmt(tmp_path, "league", "status", "short", "--json").stdout)
    assert state["blocks"] == {"done": 5} and state["ladder"]["state"] == "budget spent"
    one_line_refusal(sixnimmt(tmp_path, "league", "add", "short", "mc"), "is finished (budget spent)")


@pytest.mark.slow
@pytest.mark.xdist_group("celery-services")
def test_a_ladder_takes_a_new_entrant_mid_run_on_celery(
    tmp_path: Path, pg_url: str, redis_url: str, celery_workers: Callable[..., Any], exclusive_machine: None
) -> None:
    """The same ladder with a broker set: real Celery workers play and plan every round."""
    worker = celery_workers("ladder", database_url=pg_url, broker_url=redis_url, concurrency=2)
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url}
    started = time.monotonic()
    ladder_takes_a_newcomer(tmp_path, pg_url, env)
    blocks = stored_blocks(pg_url, "lad")
    # Every block played by the worker, none by a local pool: by the message that named it, or
    # beside another's (execute.play_with_pending).
    assert worker.claimed_all(blocks), f"{blocks} in {time.monotonic() - started:.0f} s"
    # Every message succeeded, or found its block in the set of the other pool process and looks
    # again later (execute.play_with_pending).
    assert not worker.unsettled({b.id for b in blocks if b.status == "done"})
    store = make_engine(pg_url)
    try:
        assert repo.league_phase(store, repo.find_league(store, "lad").id) == "finished"
    finally:
        store.dispose()


# --- two runners, one round ---------------------------------------------------------------------


def store_results(store: Any, league: repo.League) -> None:
    """Store made-up results for every waiting block of the league (lower position, lower score)."""
    for block in repo.claimable_blocks(store, league.id):
        claimed = repo.claim_block(store, block.id, "test")
        assert claimed is not None
        played = []
        for rotation in range(len(block.entrants)):
            seating = block.entrants[rotation:] + block.entrants[:rotation]
            seats = [
                repo.SeatRecord(seat, p, league.entrants[p].id, 3 * p + seat, 0, {}, 0, False, 0)
                for seat, p in enumerate(seating)
            ]
            ranked = sorted(seats, key=lambda s: s.score)
            seats = [dataclasses.replace(s, rank=ranked.index(s) + 1) for s in seats]
            played.append(repo.MatchRecordRow(rotation, block.seed, "sha256:x", "finished", seats, {}))
        assert repo.record_block(store, block.id, played, claim=claimed.claim)


def test_a_round_planned_before_an_add_stands_and_the_late_runner_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runner A read the ladder before a ``league add``, runner B after: both plan the next round,
    A stores its round (3 entrants) between B's reads and B's write, and B's round (4 entrants,
    other seeds under the same numbers) is refused by the store: B stores nothing and reports A's
    round as the one to play; the newcomer's placement opens the round after."""
    from workers import league as leagues
    from workers.bots.submit import reference_version
    from workers.planning import rounds
    from workers.store.migrate import upgrade

    store = make_engine(f"sqlite:///{tmp_path / 'race.db'}")
    try:
        upgrade(store)
        made = leagues.create(  # seed 1 given: no deal key, the stored seeds are the plan's
            store, "race", ["random", "lowest", "highest"], table_size=2, deals=1, fmt="ladder", seed=1,
            config={"hands": 1, "target": None}, stopping=ladder.rule(placement=2, round_deals=3).to_json(),
        )  # fmt: skip
        store_results(store, made)
        planned = [Block(b.number, b.entrants, b.seed) for b in repo.blocks_of(store, made.id)]
        round_a = rounds.next_blocks(made, repo.league_results(store, made.id), planned)  # A: 3 entrants
        repo.add_entrants(store, made.id, [reference_version("classic", "heuristic")])
        real_results = repo.league_results

        def a_stores_first(engine: Any, league_id: int) -> list[dict[str, Any]]:
            repo.add_blocks(engine, league_id, [(b.number, b.seed, b.entrants) for b in round_a])
            return real_results(engine, league_id)

        monkeypatch.setattr(repo, "league_results", a_stores_first)
        assert leagues.plan_next_round(store, made) == 3, "B: A's round is the one to play"
        monkeypatch.setattr(repo, "league_results", real_results)
        stored = [(b.number, b.seed, b.entrants) for b in repo.blocks_of(store, made.id)]
        assert stored[3:] == [(b.number, b.seed, b.entrants) for b in round_a], "A's round, once"
        grown = repo.find_league(store, "race")
        store_results(store, grown)
        assert leagues.plan_next_round(store, grown) == 2 + 3, "the newcomer's placement, then 3 more"
        newest = repo.blocks_of(store, made.id)[-5:]
        assert all(3 in b.entrants for b in newest[:2])
        assert all(b.seed == ladder._seed(1, 4, b.number) for b in newest)
        # Not a ladder: a conflict is an error, never swallowed.
        monkeypatch.setattr(repo, "add_blocks", lambda *a: (_ for _ in ()).throw(repo.ConflictError("x")))
        adaptive_like = dataclasses.replace(grown, format="round-robin")
        monkeypatch.setattr(repo, "league_by_id", lambda engine, league_id: adaptive_like)
        store_results(store, grown)
        with pytest.raises(repo.ConflictError):
            leagues.plan_next_round(store, adaptive_like)
    finally:
        store.dispose()
