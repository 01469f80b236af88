"""Adaptive leagues: the pure policy (first round, targets, budget, stopping), the store's
``add_blocks``, ``league create`` refusing bad rules, and whole leagues on the local pool.

The policy tests feed synthetic results with a known order; the league tests play real games
(sandboxed bots over gRPC, as in production) and check that the rounds stored are exactly the ones
the policy plans from the stored results.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from testkit import sixnimmt as run_cli

from arena.tournament import Block
from workers.planning import PlanError, adaptive, rounds
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import blocks as blocks_table
from workers.store.schema import leagues as leagues_table

PROJECT = Path(__file__).resolve().parents[2]


# --- synthetic leagues --------------------------------------------------------------------------


class FakeLeague:
    """What the policy reads of a league."""

    def __init__(self, entrants: int, table_size: int, seed: int, until: float, max_deals: int) -> None:
        self.name = "fake"
        self.entrants = tuple(range(entrants))
        self.table_size = table_size
        self.seed = seed
        self.variant = "classic"
        self.config = {"players": table_size}
        self.stopping: dict[str, Any] | None = adaptive.rule(until, max_deals).to_json()


def play(blocks: Sequence[Block], skill: Sequence[float], noise: float, seed: int) -> list[dict[str, Any]]:
    """Seat results of ``blocks``: bull heads = skill + noise (lower is better), every rotation."""
    rng = random.Random(seed)
    rows = []
    for block in blocks:
        for rotation, seating in enumerate(block.seatings()):
            match_id = block.number * 100 + rotation
            scores = [skill[p] + rng.gauss(0, noise) for p in seating]
            for seat, (position, score) in enumerate(zip(seating, scores, strict=True)):
                rank = 1 + sum(s < score for s in scores)
                rows.append(
                    {
                        "block": block.number,
                        "rotation": rotation,
                        "match_id": match_id,
                        "seat": seat,
                        "position": position,
                        "score": score,
                        "rank": rank,
                        "faults": 0,
                    }
                )
    return rows


def run_policy(
    league: FakeLeague, skill: Sequence[float], noise: float
) -> tuple[list[list[Block]], list[dict[str, Any]]]:
    """Every round the policy plans for a league whose games come from ``skill`` and ``noise``."""
    planned: list[Block] = []
    results: list[dict[str, Any]] = []
    played_rounds = []
    while new := rounds.next_blocks(league, results, planned):  # type: ignore[arg-type]
        played_rounds.append(new)
        planned += new
        results += play(new, skill, noise, seed=new[0].number)
    return played_rounds, results


LADDER = [10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0]


def test_the_first_round_of_8_at_tables_of_4_is_the_steiner_system() -> None:
    first = adaptive.first_round(8, 4, seed=1)
    assert len(first) == 14
    pairs = Counter(p for b in first for p in itertools.combinations(b.entrants, 2))
    assert set(pairs.values()) == {3} and len(pairs) == 28
    triples = Counter(t for b in first for t in itertools.combinations(b.entrants, 3))
    assert set(triples.values()) == {1} and len(triples) == 56
    assert [b.number for b in first] == list(range(14))
    assert len({b.seed for b in first}) == 14


@pytest.mark.parametrize("entrants,table", [(5, 3), (6, 4), (4, 2), (16, 4), (12, 5)])
def test_other_first_rounds_seat_every_pair_together(entrants: int, table: int) -> None:
    tables = adaptive.balanced_tables(entrants, table, seed=3)
    assert all(len(set(t)) == table for t in tables)
    met = Counter(p for t in tables for p in itertools.combinations(sorted(t), 2))
    assert len(met) == entrants * (entrants - 1) // 2
    assert len(tables) <= max(adaptive.FIRST_ROUND_MAX, 2 * len(met))


def test_planning_is_a_function_of_seed_and_results_only() -> None:
    league = FakeLeague(8, 4, seed=5, until=0.95, max_deals=400)
    first = rounds.next_blocks(league, [], [])  # type: ignore[arg-type]
    results = play(first, LADDER, noise=6.0, seed=1)
    shuffled = list(results)
    random.Random(9).shuffle(shuffled)
    again = rounds.next_blocks(league, shuffled, list(reversed(first)))  # type: ignore[arg-type]
    assert again == rounds.next_blocks(league, results, first)  # type: ignore[arg-type]
    assert again, "a noisy first round leaves pairs to settle"
    assert again[0].number == len(first)
    other = FakeLeague(8, 4, seed=6, until=0.95, max_deals=400)
    assert rounds.next_blocks(other, results, first) != again  # type: ignore[arg-type]


def test_new_deals_seat_both_bots_of_each_uncertain_pair() -> None:
    # Every neighbour 10 bull heads apart, except bots 3 and 4: level.
    skill = [0.0, 10.0, 20.0, 30.0, 30.0, 40.0, 50.0, 60.0]
    league = FakeLeague(8, 4, seed=2, until=0.95, max_deals=400)
    first = rounds.next_blocks(league, [], [])  # type: ignore[arg-type]
    results = play(first, skill, noise=1.0, seed=3)
    state = adaptive.status(league, results, len(first))
    assert [(p["upper"], p["lower"]) for p in state["uncertain"]] in ([(3, 4)], [(4, 3)])
    new = rounds.next_blocks(league, results, first)  # type: ignore[arg-type]
    assert len(new) == max(adaptive.DEALS_PER_PAIR, adaptive.ROUND_MIN_DEALS)
    assert all({3, 4} <= set(b.entrants) for b in new)
    # The other seats cycle through the rest of the field instead of repeating one table.
    assert len({b.entrants for b in new}) == len(new)


def test_a_league_stops_when_every_neighbour_is_settled() -> None:
    league = FakeLeague(8, 4, seed=4, until=0.95, max_deals=1000)
    played, results = run_policy(league, LADDER, noise=5.0)
    deals = sum(len(r) for r in played)
    assert len(played) > 1, "one round is not enough at this noise"
    assert deals < 1000
    state = adaptive.status(league, results, deals)
    assert state["state"] == "settled" and state["uncertain"] == []


def test_the_budget_caps_the_deals() -> None:
    # Two bots that cannot be told apart: the league runs until its budget is spent.
    skill = [0.0, 10.0, 20.0, 30.0, 30.0, 40.0, 50.0, 60.0]
    league = FakeLeague(8, 4, seed=8, until=0.95, max_deals=31)
    played, results = run_policy(league, skill, noise=1.0)
    assert sum(len(r) for r in played) == 31
    assert [len(r) for r in played[:1]] == [14]
    assert all(len(r) <= max(adaptive.DEALS_PER_PAIR, adaptive.ROUND_MIN_DEALS) for r in played[1:])
    state = adaptive.status(league, results, 31)
    assert state["state"] == "budget spent" and state["deals_left"] == 0
    assert {(p["upper"], p["lower"]) for p in state["uncertain"]} <= {(3, 4), (4, 3)}


def test_a_budget_smaller_than_the_first_round_plans_only_what_it_allows() -> None:
    league = FakeLeague(8, 4, seed=1, until=0.9, max_deals=5)
    assert len(rounds.next_blocks(league, [], [])) == 5  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "until,deals,message",
    [
        (0.5, 10, "between 0.5 and 1"),
        (1.0, 10, "between 0.5 and 1"),
        (1.5, 10, "between 0.5 and 1"),
        (0.2, 10, "between 0.5 and 1"),
        (0.9, 0, "at least 1"),
        (0.9, -3, "at least 1"),
    ],
)
def test_bad_rules_are_refused(until: float, deals: int, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        adaptive.rule(until, deals)


def test_a_fixed_league_has_no_next_round_and_an_unknown_rule_is_an_error() -> None:
    league = FakeLeague(4, 2, seed=1, until=0.9, max_deals=10)
    league.stopping = None
    assert rounds.next_blocks(league, [], []) == []  # type: ignore[arg-type]
    league.stopping = {"kind": "coin-flip"}
    with pytest.raises(PlanError, match="unknown stopping rule"):
        rounds.next_blocks(league, [], [])  # type: ignore[arg-type]


# --- the store ----------------------------------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    return store


def test_add_blocks_stores_a_round_once_and_refuses_a_different_one(engine: Engine) -> None:
    from workers.bots.submit import store_reference

    versions = [store_reference(engine, "classic", name) for name in ("random", "lowest", "highest")]
    stopping = adaptive.rule(0.9, 20).to_json()
    league_id = repo.create_league(
        engine,
        "grow",
        variant="classic",
        config={"players": 2},
        seed=1,
        format="round-robin",
        table_size=2,
        deals=1,
        entrants=versions,
        planned=[(0, 11, (0, 1)), (1, 12, (0, 2)), (2, 13, (1, 2))],
        stopping=stopping,
    )
    assert repo.find_league(engine, "grow").stopping == stopping
    round_ = [(3, 14, (0, 1)), (4, 15, (1, 2))]
    assert repo.add_blocks(engine, league_id, round_) == 2
    assert repo.add_blocks(engine, league_id, round_) == 0  # a second runner planned the same round
    assert repo.add_blocks(engine, league_id, [*round_[:1], (5, 16, (0, 2))]) == 1
    assert [b.number for b in repo.blocks_of(engine, league_id)] == [0, 1, 2, 3, 4, 5]
    with pytest.raises(repo.ConflictError, match="block 4"):
        repo.add_blocks(engine, league_id, [(4, 99, (0, 2))])
    assert len(repo.blocks_of(engine, league_id)) == 6


# --- the command line ---------------------------------------------------------------------------


def sixnimmt(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command line in ``cwd``: a SQLite store there and the local pool, unless ``env`` says otherwise."""
    return run_cli(
        cwd, *args, env={"SIXNIMMT_DATABASE_URL": f"sqlite:///{cwd / 'sixnimmt.db'}", **(env or {})}
    )


def stored_leagues(path: Path) -> int:
    store = make_engine(f"sqlite:///{path}")
    try:
        with store.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(leagues_table)).scalar_one()) + int(
                conn.execute(select(func.count()).select_from(blocks_table)).scalar_one()
            )
    finally:
        store.dispose()


@pytest.mark.parametrize(
    "options,message",
    [
        (["--until-confident", "0.5", "--max-deals", "20"], "between 0.5 and 1"),
        (["--until-confident", "1", "--max-deals", "20"], "between 0.5 and 1"),
        (["--until-confident", "1.2", "--max-deals", "20"], "between 0.5 and 1"),
        (["--until-confident", "0.9", "--max-deals", "0"], "--max-deals must be at least 1"),
        (["--max-deals", "20"], "needs both --until-confident and --max-deals"),
        (["--until-confident", "0.9"], "needs both --until-confident and --max-deals"),
        (["--until-confident", "0.9", "--max-deals", "2"], "less than the balanced first round (3 deals)"),
        (["--until-confident", "0.9", "--max-deals", "20", "--format", "gauntlet"], "round-robin"),
    ],
)
def test_league_create_refuses_bad_adaptive_options(tmp_path: Path, options: list[str], message: str) -> None:
    made = sixnimmt(
        tmp_path, "league", "create", "cup", "--bots", "random,lowest,highest", "--table", "2", *options
    )
    assert made.returncode == 2, made.stderr
    assert message in made.stderr
    assert made.stderr.count("\n") == 1 and "Traceback" not in made.stderr
    assert not (tmp_path / "sixnimmt.db").exists()  # a league that fails makes no store either


def replanned(store: Engine, league: repo.League) -> list[Block]:
    """The league's blocks as the policy plans them, round after round, from the stored results."""
    stored = repo.blocks_of(store, league.id)
    results = repo.league_results(store, league.id)
    planned: list[Block] = []
    while new := rounds.next_blocks(league, [r for r in results if r["block"] < len(planned)], planned):
        planned += new
        if len(planned) > len(stored):
            break
    return planned


LOW_COPY = """
from games.classic.bots import LowestBot


class LowCopy(LowestBot):
    pass
"""
ADAPTIVE = [
    "--seed",  # given: no deal key, so the stored rounds are the plan's (checked by replanning them)
    "1",
    "--table",
    "2",
    "--until-confident",
    "0.9",
    "--max-deals",
    "9",
    "-o",
    "hands=1",
    "-o",
    "target=None",
]


def adaptive_league(tmp_path: Path, url: str, env: dict[str, str] | None = None) -> None:
    """create → run → status of an adaptive league that can never settle, and checks it.

    Its two bots play the same deterministic strategy at a table of two: every deal, played in
    both seat orders, gives them the same mean, a gap of exactly 0 that no evidence can sign. The
    league must add rounds (one deal first, then rounds of four) until its budget of 9 is spent.
    """
    (tmp_path / "lowcopy.py").write_text(LOW_COPY)
    made = sixnimmt(
        tmp_path, "league", "create", "twins", "--bots", "lowest,lowcopy.py", *ADAPTIVE, "--json", env=env
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["blocks"] == 1
    ran = sixnimmt(tmp_path, "league", "run", "twins", "--processes", "2", "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    state = json.loads(sixnimmt(tmp_path, "league", "status", "twins", "--json", env=env).stdout)
    rounds_state = state["adaptive"]
    assert state["blocks"] == {"done": 9}, "rounds of four were added up to the budget"
    assert rounds_state["state"] == "budget spent"
    assert rounds_state["deals_planned"] == 9 and rounds_state["deals_left"] == 0
    assert [p["z"] for p in rounds_state["uncertain"]] == [0.0]
    text = sixnimmt(tmp_path, "league", "status", "twins", env=env).stdout
    assert "adaptive: until 0.9 confident; 9 deals planned, 0 of 9 left" in text
    assert "the budget is spent" in text

    store = make_engine(url)
    try:
        league = repo.find_league(store, "twins")
        stored = [Block(b.number, b.entrants, b.seed) for b in repo.blocks_of(store, league.id)]
        assert [len(stored)] == [9]
        assert replanned(store, league) == stored, "the stored rounds are the ones the results call for"
    finally:
        store.dispose()
    # Finished: running it again plays and plans nothing.
    again = sixnimmt(tmp_path, "league", "run", "twins", "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["status"]["blocks"] == {"done": 9}


def test_an_adaptive_league_on_the_local_pool_adds_rounds_and_stops(tmp_path: Path) -> None:
    """Sandboxed bots on the local pool, SQLite: rounds are added until the budget is spent."""
    adaptive_league(tmp_path, f"sqlite:///{tmp_path / 'sixnimmt.db'}")


@pytest.mark.slow
@pytest.mark.xdist_group("celery-services")
def test_an_adaptive_league_on_celery(
    tmp_path: Path, pg_url: str, redis_url: str, celery_workers: Callable[..., Any], exclusive_machine: None
) -> None:
    """The same league with a broker set: a real Celery worker plays every round's blocks."""
    worker = celery_workers("adaptive", database_url=pg_url, broker_url=redis_url, concurrency=2)
    env = {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url}
    adaptive_league(tmp_path, pg_url, env)
    store = make_engine(pg_url)
    try:
        stored = repo.blocks_of(store, repo.find_league(store, "twins").id, ["done"])
    finally:
        store.dispose()
    # Every block played by the worker, none by a local pool: by the message that named it, or
    # beside another's (execute.play_with_pending).
    assert len(stored) == 9
    assert worker.claimed_all(stored), stored
    assert not worker.unsettled(
        {b.id for b in stored}
    )  # each succeeded, or its block was played in a set beside another
