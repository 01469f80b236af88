"""The league store on SQLite and on PostgreSQL: migrations, bots, leagues, idempotent block writes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError
from testkit import migrated_store

from workers.store import repo
from workers.store.engine import StoreError, make_engine
from workers.store.migrate import is_current, upgrade
from workers.store.schema import matches, metadata, seat_results

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated, empty store: a SQLite file, or a fresh PostgreSQL database."""
    with migrated_store(request.param, tmp_path, "sixnimmt_store") as store:
        yield store


def test_migrations_create_exactly_the_declared_schema(engine: Engine) -> None:
    assert is_current(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    upgrade(engine)  # a second upgrade is a no-op
    assert is_current(engine)


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    store = make_engine(f"sqlite:///{tmp_path / 'wal.db'}")
    with store.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.dispose()


def test_bad_database_urls_are_refused_clearly() -> None:
    with pytest.raises(StoreError, match="not a database URL"):
        make_engine("this is not a url")


def version(engine: Engine, name: str, content: bytes) -> repo.BotVersion:
    import hashlib

    stored, _ = repo.add_bot_version(
        engine, name, content, hashlib.sha256(content).hexdigest(), "bot.py", "classic"
    )
    return stored


def test_bot_versions_are_immutable_and_content_addressed(engine: Engine) -> None:
    first = version(engine, "alice", b"one")
    again = version(engine, "alice", b"one")
    second = version(engine, "alice", b"two")
    other = version(engine, "bob", b"one")
    assert again == first
    assert (first.version, second.version, other.version) == (1, 2, 1)
    assert repo.artifact(engine, first.sha256) == b"one"
    assert repo.find_version(engine, "alice") == second
    assert repo.find_version(engine, "alice@1") == first
    with pytest.raises(repo.NotFoundError, match="no bot 'carol'"):
        repo.find_version(engine, "carol")
    listed = {(row["name"], row["version"]) for row in repo.list_bots(engine)}
    assert listed == {("alice", 1), ("alice", 2), ("bob", 1)}


def make_league(engine: Engine, name: str = "l") -> repo.League:
    versions = [version(engine, f"bot{i}", f"code{i}".encode()) for i in range(3)]
    repo.create_league(
        engine,
        name,
        variant="classic",
        config={"players": 2},
        seed=5,
        format="round-robin",
        table_size=2,
        deals=1,
        entrants=versions,
        planned=[(0, 11, (0, 1)), (1, 12, (0, 2)), (2, 13, (1, 2))],
    )
    return repo.find_league(engine, name)


def played(block: repo.BlockRow, league: repo.League) -> list[repo.MatchRecordRow]:
    out = []
    for rotation in range(2):
        seating = block.entrants[rotation:] + block.entrants[:rotation]
        seats = [
            repo.SeatRecord(
                seat,
                position,
                league.entrants[position].id,
                10 + seat,
                seat + 1,
                {"timeout": seat},
                0,
                False,
                5,
            )
            for seat, position in enumerate(seating)
        ]
        out.append(
            repo.MatchRecordRow(
                rotation, block.seed, f"sha256:{rotation}", "hands_played", seats, {"rotation": rotation}
            )
        )
    return out


def count_matches(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (
            conn.execute(select(func.count()).select_from(matches)).scalar_one(),
            conn.execute(select(func.count()).select_from(seat_results)).scalar_one(),
        )


def test_a_league_is_stored_whole_or_not_at_all(engine: Engine) -> None:
    league = make_league(engine)
    assert [b.number for b in repo.blocks_of(engine, league.id)] == [0, 1, 2]
    with pytest.raises(repo.ConflictError, match="exists already"):
        make_league(engine)
    assert len(repo.list_leagues(engine)) == 1


def test_writing_a_block_is_idempotent(engine: Engine) -> None:
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[0]
    assert repo.claim_block(engine, block.id, "w1") is not None
    assert repo.record_block(engine, block.id, played(block, league)) is True
    assert count_matches(engine) == (2, 4)
    # A redelivered task: the claim says done, and a second write stores nothing.
    assert repo.claim_block(engine, block.id, "w2") is None
    assert repo.record_block(engine, block.id, played(block, league)) is False
    assert count_matches(engine) == (2, 4)
    counts = repo.league_counts(engine, league.id)
    assert counts["blocks"] == {"done": 1, "pending": 2}
    assert counts["faults"]["timeout"] == 2  # seat 1 of each rotation
    results = repo.league_results(engine, league.id)
    assert [(r["rotation"], r["seat"]) for r in results] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_a_failed_write_leaves_nothing_half_stored(engine: Engine) -> None:
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[1]
    rows = played(block, league)
    broken = repo.MatchRecordRow(1, 0, "sha256:x", "t", rows[1].seats, {"x": 1})
    # Two matches with the same rotation violate the (block, rotation) key: the whole write fails.
    with pytest.raises(IntegrityError):
        repo.record_block(engine, block.id, [rows[0], broken, rows[0]])
    assert count_matches(engine) == (0, 0)
    assert repo.get_block(engine, block.id).status == "pending"


def test_concurrent_writes_of_one_block_store_it_once(engine: Engine) -> None:
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[2]
    rows = played(block, league)
    outcomes: list[bool] = []
    barrier = threading.Barrier(4)

    def write() -> None:
        barrier.wait()
        outcomes.append(repo.record_block(engine, block.id, rows))

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False, False, False, True]
    assert count_matches(engine) == (2, 4)


def test_a_failed_block_stays_claimable_and_says_why(engine: Engine) -> None:
    league = make_league(engine)
    block = repo.blocks_of(engine, league.id)[0]
    repo.claim_block(engine, block.id, "w1")
    repo.fail_block(engine, block.id, "referee did not start")
    assert repo.league_counts(engine, league.id)["errors"] == [{"block": 0, "error": "referee did not start"}]
    again = repo.claim_block(engine, block.id, "w2")
    assert again is not None and again.attempts == 2 and again.status == "running"


def test_ratings_are_replaced_as_a_whole(engine: Engine) -> None:
    league = make_league(engine)
    row = {
        "mu": 25.0,
        "sigma": 8.0,
        "ordinal": 1.0,
        "games": 2,
        "mean_score": 3.0,
        "ci_low": 1.0,
        "ci_high": 5.0,
        "faults": 0,
    }
    repo.store_ratings(engine, league.id, [{"position": 0, **row}, {"position": 1, **row}])
    repo.store_ratings(engine, league.id, [{"position": 2, **row}])
    assert [r["position"] for r in repo.load_ratings(engine, league.id)] == [2]


def test_a_new_sqlite_store_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    (tmp_path / "private").mkdir()
    store = make_engine(f"sqlite:///{tmp_path / 'private' / 'store.db'}")
    upgrade(store)
    store.dispose()
    for path in (tmp_path / "private").iterdir():
        assert path.stat().st_mode & 0o077 == 0, path
