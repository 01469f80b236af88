"""Helpers of the dashboard's tests: a store filled by a real small league, waiting, ports.

The league is created and played the way users do it (``workers.league.create`` and
``run_local``: every bot a sandboxed process over gRPC), then two of its bots are renamed to
hostile names, as if someone had slipped them into the store: every page must escape them.
The same league is built on SQLite and, when the machine's PostgreSQL answers, on PostgreSQL.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, update
from testkit import free_port as free_port  # re-exported for this kit's users
from testkit import wait_for as wait_for

from workers import league as leagues
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import upgrade
from workers.store.schema import bots
from workers.store.schema import leagues as leagues_table

SCRIPT_NAME = "<script>alert(1)</script>"
QUOTE_NAME = "\"quoted' & <b>bold</b>"
LEAGUE_NAME = "spring <i>cup</i> \"&\" 'co'"
BOTS = ["random", "lowest", "heuristic", "highest"]
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


@dataclass(frozen=True)
class LeagueStore:
    """A store holding one played league, and what the league module says about it."""

    url: str
    engine: Engine
    """Read only, as the dashboard opens it."""
    league: repo.League
    standings: list[dict[str, Any]]
    head_to_head: list[list[dict[str, int]]]
    names: dict[str, str]
    """Reference bot name → its name in the store (two of them hostile)."""


def play_league(url: str, name: str = LEAGUE_NAME) -> LeagueStore:
    """Create and play a small classic league (4 bots, tables of 3, 2 hands a game), then rename
    two bots to hostile names and compute the standings."""
    writer = make_engine(url)
    try:
        upgrade(writer)
        # League names are validated now; a hostile one is slipped into the store afterwards, as
        # one stored before the validation would be: every page must still escape it.
        league = leagues.create(
            writer,
            "dashboard-league",
            BOTS,
            table_size=3,
            deals=1,
            seed=7,
            config={"hands": 2, "target": None},
        )
        counts = leagues.run_local(writer, league, processes=2)
        assert counts == {"stored": 4}, counts
        names = dict(zip(BOTS, BOTS, strict=True)) | {"random": SCRIPT_NAME, "lowest": QUOTE_NAME}
        with writer.begin() as conn:
            for old, new in names.items():  # reference bots are stored as GAME/NAME: shorter here
                conn.execute(update(bots).where(bots.c.name == f"classic/{old}").values(name=new))
            conn.execute(update(leagues_table).where(leagues_table.c.id == league.id).values(name=name))
        league = repo.find_league(writer, name)
        table = leagues.standings(writer, league)
        h2h = leagues.head_to_head(writer, league)
    finally:
        writer.dispose()
    return LeagueStore(url, make_engine(url, read_only=True), league, table, h2h, names)


SCREENSHOTS = Path(__file__).parent / "screenshots"


def load_bench() -> Any:
    """The benchmark module that fills a store by bulk inserts (bench/bench_dashboard.py)."""
    path = Path(__file__).parents[2] / "bench" / "bench_dashboard.py"
    spec = importlib.util.spec_from_file_location("bench_dashboard", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def apart_text(r: dict[str, Any]) -> str:
    """The "vs next" cell of a standings row."""
    following = r["detail"]["next"]
    return "" if following is None else ("told apart" if following["distinct"] else "can't tell apart")


def expected_cells(r: dict[str, Any]) -> list[tuple[str, str]]:
    """The numeric cells of a standings row, as the league page shows them (class, text)."""
    d = r["detail"]
    following = d["next"]
    gap = ""
    if following is not None:
        gap = f"{following['gap']:.2f}"
        if following["low"] is not None:
            gap += f" [{following['low']:.2f}, {following['high']:.2f}]"
    ranks = str(d["rank_low"]) + ("" if d["rank_high"] == d["rank_low"] else f"–{d['rank_high']}")
    return [
        ("score", f"{r['score']:.2f}"),
        (
            "scoreci",
            "too few blocks" if d["score_low"] is None else f"[{d['score_low']:.2f}, {d['score_high']:.2f}]",
        ),
        ("ranks", ranks),
        ("gap", gap),
        ("mean", f"{r['mean_score']:.2f}"),
        ("interval", "too few blocks" if r["ci_low"] is None else f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]"),
        ("games", str(r["games"])),
        ("faults", str(r["faults"])),
        ("rating", f"{r['ordinal']:.2f}"),
    ]
