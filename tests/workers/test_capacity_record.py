"""A block's results stored in one statement on PostgreSQL store what the transaction of four did.

``repo.record_block`` on PostgreSQL marks the block stored and inserts its matches, seat results
and transcripts in one statement (docs/capacity.md, fix 8); SQLite keeps the transaction. Both
stores get the same results here, and every stored column is compared, with the same checks
(already stored, another claim's block, no such block).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from test_store import version
from testkit import migrated_store

from workers.store import repo
from workers.store.schema import blocks, matches, seat_results, transcripts


def _league(store: Engine) -> repo.League:
    versions = [version(store, f"rec{i}", f"# bot {i}\n".encode()) for i in range(3)]
    league_id = repo.create_league(
        store,
        "rec",
        variant="classic",
        config={"players": 3},
        seed=5,
        format="round-robin",
        table_size=3,
        deals=2,
        entrants=versions,
        planned=[(0, 2**62 + 11, (0, 1, 2)), (1, 12, (2, 0, 1))],
    )
    return repo.league_by_id(store, league_id)


def _played(block: repo.BlockRow, league: repo.League) -> list[repo.MatchRecordRow]:
    """Three matches given out of rotation order, with faults, a fault detail, a forfeit and a
    transcript of some size."""
    out = []
    for rotation in (2, 0, 1):
        seating = block.entrants[rotation:] + block.entrants[:rotation]
        seats = [
            repo.SeatRecord(
                seat,
                position,
                league.entrants[position].id,
                7 * seat + rotation,
                seat + 1,
                {"timeout": seat, "crash": rotation, "exception": 1} if seat else {},
                seat,
                seat == 2,
                40 + seat,
                '{"timeout": ["slow"]}' if seat == 1 else None,
            )
            for seat, position in enumerate(seating)
        ]
        transcript = {"rotation": rotation, "steps": [[rotation, i, "é"] for i in range(300)]}
        out.append(
            repo.MatchRecordRow(
                rotation, block.seed + rotation, f"sha256:{rotation}", "done", seats, transcript
            )
        )
    return out


def _stored(store: Engine, league_id: int) -> list[Any]:
    """Every stored row of the league's results, match ids as their order within a block."""
    with store.connect() as conn:
        match_rows = conn.execute(
            select(matches.c.id, blocks.c.number, matches.c.rotation, matches.c.seed, matches.c.digest)
            .add_columns(matches.c.termination)
            .join(blocks, blocks.c.id == matches.c.block_id)
            .where(blocks.c.league_id == league_id)
            .order_by(matches.c.id)
        ).all()
        ids = [r.id for r in match_rows]
        seats = conn.execute(
            select(seat_results).where(seat_results.c.match_id.in_(ids)).order_by(seat_results.c.match_id)
        ).all()
        bodies = dict(conn.execute(select(transcripts.c.match_id, transcripts.c.body)).all())
        states = conn.execute(
            select(blocks.c.number, blocks.c.status, blocks.c.error, blocks.c.lease_until)
            .where(blocks.c.league_id == league_id)
            .order_by(blocks.c.number)
        ).all()
    place = {mid: i for i, mid in enumerate(ids)}
    return [
        [tuple(r)[1:] for r in match_rows],
        sorted((place[s.match_id], *tuple(s)[1:]) for s in seats),
        sorted((place[mid], body) for mid, body in bodies.items() if mid in place),
        [tuple(s) for s in states],
    ]


def _store_all(store: Engine) -> list[Any]:
    league = _league(store)
    first, second = repo.blocks_of(store, league.id)
    with pytest.raises(repo.NotFoundError):
        repo.record_block(store, 10_000, _played(first, league), claim=("w", 1))
    claim = repo.claim_block(store, first.id, "w", lease_s=60)
    assert claim is not None
    # A claim that is not the block's stores nothing; the block's stores once.
    assert repo.record_block(store, first.id, _played(first, league), claim=("other", 1)) is False
    assert repo.record_block(store, first.id, _played(first, league), claim=claim.claim) is True
    assert repo.record_block(store, first.id, _played(first, league), claim=claim.claim) is False
    assert repo.record_block(store, first.id, _played(first, league)) is False
    # Without a claim (the local pool).
    assert repo.record_block(store, second.id, _played(second, league)) is True
    return _stored(store, league.id)


def test_results_stored_in_one_statement_are_those_of_the_transaction(tmp_path: Path) -> None:
    with (
        migrated_store("sqlite", tmp_path, "rec_sqlite") as lite,
        migrated_store("postgresql", tmp_path, "rec_pg") as pg,
    ):
        on_sqlite, on_pg = _store_all(lite), _store_all(pg)
        # Matches take their ids in the order given (2, 0, 1), as the inserts of several rows did.
        assert [m[1] for m in on_pg[0]] == [2, 0, 1, 2, 0, 1]
        assert on_pg == on_sqlite
        assert [s[:3] for s in on_pg[3]] == [(0, "done", None), (1, "done", None)]
        pg_league, lite_league = repo.find_league(pg, "rec").id, repo.find_league(lite, "rec").id
        assert len(repo.league_results(pg, pg_league)) == 18
        assert repo.league_results(pg, pg_league) == repo.league_results(lite, lite_league)


def test_a_block_without_matches_is_marked_stored(tmp_path: Path) -> None:
    with migrated_store("postgresql", tmp_path, "rec_empty") as pg:
        league = _league(pg)
        block = repo.blocks_of(pg, league.id)[0]
        assert repo.record_block(pg, block.id, []) is True
        assert repo.get_block(pg, block.id).status == "done"
        assert repo.league_results(pg, league.id) == []
