"""Bot accounts and API keys in the store, on SQLite and PostgreSQL: hashed, shown once, revocable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, select
from testkit import migrated_store

from workers.bots import accounts, entrants
from workers.store import repo
from workers.store.schema import api_keys, metadata

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated, empty store: a SQLite file, or a fresh PostgreSQL database."""
    with migrated_store(request.param, tmp_path, "sixnimmt_remote") as store:
        yield store


def test_the_migration_creates_exactly_the_declared_tables(engine: Engine) -> None:
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


def test_a_key_is_stored_as_its_hash_only_and_shown_once(engine: Engine) -> None:
    accounts.create_account(engine, "alice")
    key, secret = accounts.create_key(engine, "alice", max_connections=1, max_matches=4)
    assert secret.startswith(f"snk_{key.key_id}_") and len(secret) > 40
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(select(api_keys))]
    assert len(rows) == 1
    assert rows[0]["sha256"] == accounts.key_hash(secret)
    assert not any(secret in str(value) for row in rows for value in row.values())
    assert (key.account, key.max_connections, key.max_matches, key.revoked) == ("alice", 1, 4, False)
    # What the referee is handed: the hash and the limits, never the key.
    assert accounts.referee_keys(engine) == [
        {
            "key_id": key.key_id,
            "account": "alice",
            "sha256": accounts.key_hash(secret),
            "max_connections": 1,
            "max_matches": 4,
        }
    ]
    other, second = accounts.create_key(engine, "alice")
    assert second != secret and other.key_id != key.key_id


def test_the_key_set_generation_grows_with_every_key_made_or_revoked(engine: Engine) -> None:
    keys, empty = accounts.referee_key_set(engine)
    assert (keys, empty) == ([], 1)  # never 0, the protocol's "not ordered"
    accounts.create_account(engine, "alice")
    assert accounts.referee_key_set(engine)[1] == empty  # an account alone changes no key
    first, _ = accounts.create_key(engine, "alice")
    made = accounts.referee_key_set(engine)
    assert made[1] > empty and made == accounts.referee_key_set(engine)  # same state, same number
    accounts.create_key(engine, "alice")
    two = accounts.referee_key_set(engine)[1]
    accounts.revoke_key(engine, first.key_id)
    keys, revoked = accounts.referee_key_set(engine)
    assert made[1] < two < revoked
    assert [k["key_id"] for k in keys] == [k["key_id"] for k in accounts.referee_keys(engine)]
    assert first.key_id not in {k["key_id"] for k in keys}


def test_a_revoked_key_stays_listed_and_leaves_the_referee_keys(engine: Engine) -> None:
    accounts.create_account(engine, "alice")
    key, secret = accounts.create_key(engine, "alice")
    kept, _ = accounts.create_key(engine, "alice")
    revoked = accounts.revoke_key(engine, secret)  # the whole key names it too
    assert revoked.key_id == key.key_id and revoked.revoked
    assert [k["key_id"] for k in accounts.referee_keys(engine)] == [kept.key_id]
    assert [(k.key_id, k.revoked) for k in accounts.list_keys(engine, "alice")] == [
        (key.key_id, True),
        (kept.key_id, False),
    ]
    with pytest.raises(repo.ConflictError, match="revoked already"):
        accounts.revoke_key(engine, key.key_id)
    assert accounts.list_accounts(engine) == [
        {"account": "alice", "bot": "remote/alice", "keys": 1, "revoked": 1}
    ]


def test_bad_account_and_key_requests_are_refused_in_one_line(engine: Engine) -> None:
    accounts.create_account(engine, "alice")
    with pytest.raises(repo.ConflictError, match="exists already"):
        accounts.create_account(engine, "alice")
    with pytest.raises(repo.BadNameError):
        accounts.create_account(engine, "a/b")
    with pytest.raises(repo.BadNameError):
        accounts.create_account(engine, "bad name")
    with pytest.raises(repo.NotFoundError, match="bot account create bob"):
        accounts.create_key(engine, "bob")
    with pytest.raises(repo.NotFoundError, match="no API key"):
        accounts.revoke_key(engine, "0123456789ab")
    with pytest.raises(repo.ConflictError, match="--max-matches must be from 1"):
        accounts.create_key(engine, "alice", max_matches=0)
    assert accounts.list_keys(engine) == []


def test_an_account_enters_a_league_as_one_remote_version_per_game(engine: Engine) -> None:
    accounts.create_account(engine, "alice")
    found = entrants.resolve(engine, ["remote:alice", "random"], "classic", sandbox=False)
    new = found[0]
    assert isinstance(new, repo.NewVersion) and (new.bot, new.entry_point) == ("remote/alice", "remote:alice")
    version, _ = repo.add_bot_version(engine, new.bot, new.content, new.sha256, new.entry_point, new.variant)
    assert accounts.remote_account(version) == "alice"
    assert entrants.resolve(engine, ["remote:alice"], "classic", sandbox=False) == [version]
    board = entrants.resolve(engine, ["remote:alice"], "board", sandbox=False)[0]
    assert isinstance(board, repo.NewVersion) and board.sha256 != version.sha256
    with pytest.raises(repo.NotFoundError, match="no bot account 'bob'"):
        entrants.resolve(engine, ["remote:bob"], "classic", sandbox=False)
    with pytest.raises(entrants.EntrantError, match="remote:alice\\*2"):
        entrants.resolve(engine, ["remote:alice", "remote:alice"], "classic", sandbox=False)
