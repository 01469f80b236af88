"""Games against people in the store (migration 0010), on SQLite and on PostgreSQL: stored whole,
kept apart from the leagues, and added to a store made at 0009 without touching what it holds."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, func, inspect, select
from testkit import migrated_store

from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import is_current, upgrade
from workers.store.schema import (
    human_matches,
    human_seats,
    human_transcripts,
    matches,
    metadata,
    seat_results,
)

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_store(request.param, tmp_path, "sixnimmt_human") as store:
        yield store


def _version(engine: Engine, name: str, content: bytes, variant: str = "classic") -> repo.BotVersion:
    stored, _ = repo.add_bot_version(
        engine, name, content, hashlib.sha256(content).hexdigest(), "bot.py", variant
    )
    return stored


def _game(versions: list[repo.BotVersion], person: str = "Ada") -> repo.HumanMatch:
    transcript = {
        "variant": "classic",
        "seed": 7,
        "meta": {"seats": [f"human:{person}", *[v.bot for v in versions]]},
    }
    seats = [repo.HumanSeat(0, None, f"human:{person}", 12, 1, {"timeout": 1}, defaulted=1)]
    seats += [
        repo.HumanSeat(i + 1, v.id, None, 20 + i, 2 + i, {}, think_ms=5) for i, v in enumerate(versions)
    ]
    return repo.HumanMatch("classic", {"players": 3}, 7, "sha256:" + "0" * 64, "target", seats, transcript)


def test_a_game_against_a_person_is_stored_whole_and_apart_from_the_leagues(engine: Engine) -> None:
    a = _version(engine, "alpha", b"a = 1\n")
    b = _version(engine, "beta", b"b = 1\n")
    match_id = repo.record_human_match(engine, _game([a, b]))
    with engine.connect() as conn:
        row = conn.execute(select(human_matches).where(human_matches.c.id == match_id)).one()
        seats = conn.execute(select(human_seats).order_by(human_seats.c.seat)).all()
        assert conn.execute(select(func.count()).select_from(human_transcripts)).scalar_one() == 1
        # Nothing lands where the leagues read.
        assert conn.execute(select(func.count()).select_from(matches)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(seat_results)).scalar_one() == 0
    assert (row.variant, row.config, row.seed, row.termination, row.operator) == (
        "classic",
        {"players": 3},
        7,
        "target",
        False,
    )
    assert [(s.seat, s.bot_version_id, s.person, s.score, s.rank) for s in seats] == [
        (0, None, "human:Ada", 12, 1),
        (1, a.id, None, 20, 2),
        (2, b.id, None, 21, 3),
    ]
    assert (seats[0].timeouts, seats[0].defaulted, seats[1].think_ms) == (1, 1, 5)
    stored = repo.human_transcript(engine, match_id)
    assert stored is not None and stored["meta"]["seats"] == ["human:Ada", "alpha", "beta"]
    assert repo.human_transcript(engine, match_id + 1) is None


def test_a_seat_is_a_bot_version_or_the_person_never_both() -> None:
    with pytest.raises(ValueError, match="either"):
        repo.HumanSeat(0, 3, "Ada", 0, 1, {})
    with pytest.raises(ValueError, match="either"):
        repo.HumanSeat(0, None, None, 0, 1, {})


def test_people_play_against_versions_not_retired_of_their_variant(engine: Engine) -> None:
    old = _version(engine, "alpha", b"a = 1\n")
    new = _version(engine, "alpha", b"a = 2\n")
    other = _version(engine, "kid", b"k = 1\n", variant="junior-basic")
    repo.set_retired(engine, "alpha@1", True)
    playable = repo.playable_versions(engine)
    assert [(v.bot, v.version) for v in playable] == [("alpha", 2), ("kid", 1)]
    assert [v.id for v in repo.playable_versions(engine, "classic")] == [new.id]
    assert [v.id for v in repo.playable_versions(engine, "junior-basic")] == [other.id]
    assert old.id not in {v.id for v in playable}


def _upgraded_from_0009(store: Engine) -> None:
    upgrade(store, "0009")
    version = _version(store, "alpha", b"a = 1\n")
    assert "human_matches" not in inspect(store).get_table_names()
    upgrade(store)
    assert is_current(store)
    with store.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    assert [v.id for v in repo.playable_versions(store)] == [version.id]
    match_id = repo.record_human_match(store, _game([version]))
    assert repo.human_transcript(store, match_id) is not None


def test_migration_0010_upgrades_a_sqlite_store_made_at_0009(tmp_path: Path) -> None:
    store = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        _upgraded_from_0009(store)
    finally:
        store.dispose()


def test_migration_0010_upgrades_a_postgresql_store_made_at_0009() -> None:
    name = f"sixnimmt_human_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    store = make_engine(f"postgresql://postgres@127.0.0.1:5432/{name}")
    try:
        _upgraded_from_0009(store)
    finally:
        store.dispose()
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migration_0010_goes_down_and_up(engine: Engine) -> None:
    from alembic import command

    from workers.store.migrate import alembic_config

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0009")
    assert not {"human_matches", "human_seats", "human_transcripts"} & set(inspect(engine).get_table_names())
    upgrade(engine)
    assert {"human_matches", "human_seats", "human_transcripts"} <= set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
