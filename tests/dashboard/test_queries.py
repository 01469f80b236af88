"""The dashboard's queries are index-backed, its migration round-trips, its plots are sane."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from dashkit import load_bench
from sqlalchemy import event
from starlette.testclient import TestClient

from dashboard import leaguestats, plots
from dashboard.app import create_app
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

BIG_TABLES = ("blocks", "matches", "seat_results", "transcripts")


def test_every_page_query_is_index_backed(tmp_path: Path) -> None:
    """No page reads a big table row by row: SQLite's plan never scans one (a covering index
    scan of blocks is allowed: it is the index of (league, status) the progress counts use)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league_id = load_bench().fill(writer, 400)
    writer.dispose()
    engine = make_engine(url, read_only=True)
    statements: list[tuple[str, Any]] = []

    @event.listens_for(engine, "before_cursor_execute")
    def record(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        statements.append((statement, parameters))

    pages = [
        "/",
        f"/leagues/{league_id}",
        f"/leagues/{league_id}/matches?page=3",
        "/bots/1/matches?page=2",
        "/bots/1",
        "/live",
        f"/live?league={league_id}",
        "/matches/5",
    ]
    with TestClient(create_app(engine)) as client:
        for path in pages:
            response = client.get(path)
            assert response.status_code in (200, 404), path  # the bench stores no transcripts
    plans = []
    raw = engine.raw_connection()
    try:
        for statement, parameters in statements:
            if not statement.lstrip().upper().startswith("SELECT"):
                continue
            rows = raw.cursor().execute("EXPLAIN QUERY PLAN " + statement, parameters or ()).fetchall()
            plans.append((statement, [row[-1] for row in rows]))
    finally:
        raw.close()
        engine.dispose()
    assert len(plans) > 15
    for statement, details in plans:
        for detail in details:
            match = re.match(r"SCAN (\w+)", detail)
            if match and match.group(1) in BIG_TABLES:
                assert "COVERING INDEX ix_blocks_league_id_status" in detail, (detail, statement)


def test_the_bench_store_serves_every_page(tmp_path: Path) -> None:
    """`make bench` fills its store by bulk inserts: it must stay a store the dashboard reads."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    league_id = load_bench().fill(writer, 80)
    with TestClient(create_app(writer)) as client:
        for path in ("/", f"/leagues/{league_id}", f"/leagues/{league_id}/matches", "/bots/2", "/live"):
            assert client.get(path).status_code == 200, path
        table = client.get(f"/api/leagues/{league_id}").json()
    assert table["league"]["matches"] == 80 and len(table["standings"]["rows"]) == 8
    writer.dispose()


def test_the_dashboard_migration_goes_down_and_up(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    from alembic import command

    from workers.store.migrate import alembic_config

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0001")
    with engine.connect() as conn:
        names = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "ix_seat_results_bot_version_id" in names and "ix_blocks_status_finished_at" not in names
    upgrade(engine)
    with engine.connect() as conn:
        names = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"ix_blocks_status_finished_at", "ix_seat_results_bot_version_id_match_id"} <= names
    assert "ix_seat_results_bot_version_id" not in names
    engine.dispose()


def test_rating_paths_are_thinned_but_keep_both_ends() -> None:
    path = [(i, float(i)) for i in range(1001)]
    thin = leaguestats.thin(path, 200)
    assert len(thin) == 200 and thin[0] == path[0] and thin[-1] == path[-1]
    assert thin == sorted(thin)
    assert leaguestats.thin(path[:50]) == path[:50]


def test_pair_counts_and_paths_from_rows() -> None:
    # Two matches of three entrants: 0 beats 1 beats 2, then 2 and 1 share first place.
    rows = [(1, 0, 5, 1), (1, 1, 9, 2), (1, 2, 20, 3), (2, 0, 30, 3), (2, 1, 3, 1), (2, 2, 3, 1)]
    stats = leaguestats.compute(rows, 3, done_blocks=1)
    assert stats.pairs[(0, 1)] == [2, 1, 0, 1, 35, 12]
    assert stats.pairs[(1, 2)] == [2, 1, 1, 0, 12, 23]
    assert [games for games, _ in stats.paths[0]] == [0, 1, 2]


def test_plot_geometry_stays_inside_the_frame() -> None:
    plot = plots.line_plot(
        [("a", [(0, -3.0), (5, 2.5), (10, 17.0)]), ("b", [(0, 0.0), (3, -8.0)]), ("c", [])]
    )
    assert plot is not None and len(plot["lines"]) == 2
    for line in plot["lines"]:
        for point in line["points"].split():
            x, y = map(float, point.split(","))
            assert plot["left"] <= x <= plot["right"] and plot["top"] <= y <= plot["bottom"]
    assert plots.line_plot([("empty", [])]) is None
    assert plots.ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert plots.ticks(-7.3, 41)[0] <= -7.3 and plots.ticks(-7.3, 41)[-1] >= 41


def test_the_dashboard_engine_reads_without_locking_and_refuses_writes(tmp_path: Path) -> None:
    """On SQLite a page is a WAL read snapshot: a league writing meanwhile is not held up."""
    import sqlite3

    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    path = tmp_path / "store.db"
    writer = make_engine(f"sqlite:///{path}")
    upgrade(writer)
    writer.dispose()
    reader = make_engine(f"sqlite:///{path}", read_only=True)
    with reader.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM leagues")).scalar() == 0  # a read transaction is open
        other = sqlite3.connect(path, timeout=0.2)
        other.execute("BEGIN IMMEDIATE")  # takes the write lock at once, as the league does
        other.rollback()
        other.close()
        with pytest.raises(OperationalError, match="readonly"):
            conn.execute(text("DELETE FROM leagues"))
    reader.dispose()


def test_league_statistics_follow_a_growing_league(tmp_path: Path) -> None:
    """Stale statistics are served while they are recomputed at most every refresh period."""
    from sqlalchemy import update

    from workers.store.schema import blocks

    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    league_id = load_bench().fill(engine, 40)  # ten blocks
    with engine.begin() as conn:
        conn.execute(update(blocks).where(blocks.c.number == 9).values(status="running"))
    slow = leaguestats.StatsCache(engine, wait_s=10, refresh_s=3600)
    stats, fresh = slow.get(league_id, 8, 9)
    assert fresh and stats is not None and stats.done_blocks == 9
    with engine.begin() as conn:
        conn.execute(update(blocks).where(blocks.c.number == 9).values(status="done"))
    stats, fresh = slow.get(league_id, 8, 10)
    assert not fresh and stats is not None and stats.done_blocks == 9  # served stale, not recomputed
    eager = leaguestats.StatsCache(engine, wait_s=10, refresh_s=0)
    eager.get(league_id, 8, 9)
    stats, fresh = eager.get(league_id, 8, 10)
    assert fresh and stats is not None and stats.done_blocks == 10
    assert sum(cell[0] for cell in stats.pairs.values()) == 40 * 4 * 3
    slow.close()
    eager.close()
    engine.dispose()
