"""Participant accounts in the store (migration 0011) on SQLite and PostgreSQL, the operator's
``sixnimmt account`` commands, and the API over PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from apikit import GOOD_BOT, OUTSIDE_TREE, site, wait_valid
from sqlalchemy import Engine, insert, inspect, select
from testkit import migrated_store

from bot_sdk.client import pack_archive
from workers.bots import accounts
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.migrate import is_current, upgrade
from workers.store.schema import api_keys, bot_accounts, bot_owners, bots, metadata

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@contextlib.contextmanager
def _store(kind: str, directory: Path) -> Iterator[Engine]:
    """An empty store (no schema yet): a SQLite file or a fresh PostgreSQL database."""
    if kind == "sqlite":
        store = make_engine(f"sqlite:///{directory / 'old.db'}")
        try:
            yield store
        finally:
            store.dispose()
        return
    name = f"sixnimmt_accounts_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    store = make_engine(f"postgresql://postgres@127.0.0.1:5432/{name}")
    try:
        yield store
    finally:
        store.dispose()
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migration_0011_makes_remote_bot_accounts_participants_that_own_their_bot(
    kind: str, tmp_path: Path
) -> None:
    with _store(kind, tmp_path) as store:
        upgrade(store, "0010")
        key_id, key = accounts.make_key()
        with store.begin() as conn:  # a remote-bot account as revision 0010 stored it
            bot_id = conn.execute(insert(bots).values(name="remote/carol").returning(bots.c.id)).scalar_one()
            account_id = conn.execute(
                insert(bot_accounts).values(name="carol", bot_id=bot_id).returning(bot_accounts.c.id)
            ).scalar_one()
            conn.execute(
                insert(api_keys).values(
                    key_id=key_id,
                    account_id=account_id,
                    sha256=accounts.key_hash(key),
                    max_connections=2,
                    max_matches=64,
                )
            )
        assert "bot_owners" not in inspect(store).get_table_names()
        upgrade(store)
        assert is_current(store)
        with store.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert conn.execute(select(bot_owners.c.bot_id, bot_owners.c.account_id)).all() == [
                (bot_id, account_id)
            ]
        # The account is a participant now: its key opens the API, and its remote bot is still its.
        caller = accounts.authenticate(store, key)
        assert caller is not None and (caller.account, caller.display_name) == ("carol", "carol")
        assert accounts.list_participants(store)[0] | {} == {
            "account": "carol",
            "display_name": "carol",
            "bot": "remote/carol",
            "keys": 1,
            "revoked": 0,
            "bots": 0,
        }
        assert [k["account"] for k in accounts.referee_keys(store)] == ["carol"]
        assert repo.owned_versions(store, account_id) == []  # the remote bot has no code to activate


def test_migration_0011_goes_down_and_up(tmp_path: Path) -> None:
    from alembic import command

    from workers.store.migrate import alembic_config

    with migrated_store("sqlite", tmp_path, "unused") as store:
        accounts.create_account(store, "dana")
        config = alembic_config()
        with store.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0010")
        assert not {"bot_owners", "active_versions", "submissions"} & set(inspect(store).get_table_names())
        upgrade(store)
        with store.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert [r["account"] for r in accounts.list_participants(store)] == ["dana"]


def _sixnimmt(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=OUTSIDE_TREE,
        timeout=120,
    )


def test_the_operators_account_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    made = _sixnimmt("account", "create", "erin", "--display-name", "Erin E.", "--json", url=url)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == {"account": "erin", "display_name": "Erin E.", "bot": "remote/erin"}
    key = json.loads(_sixnimmt("account", "key", "create", "erin", "--json", url=url).stdout)
    assert key["key"].startswith("snk_") and key["account"] == "erin"
    listed = json.loads(_sixnimmt("account", "list", "--json", url=url).stdout)
    assert [(r["account"], r["display_name"], r["keys"]) for r in listed] == [("erin", "Erin E.", 1)]
    # The older commands name the same accounts.
    assert json.loads(_sixnimmt("bot", "account", "list", "--json", url=url).stdout)[0]["account"] == "erin"
    revoked = _sixnimmt("account", "key", "revoke", key["key_id"], "--json", url=url)
    assert json.loads(revoked.stdout)["revoked_at"] is not None
    keys = json.loads(_sixnimmt("account", "key", "list", "erin", "--json", url=url).stdout)
    assert [(k["key_id"], k["revoked_at"] is not None) for k in keys] == [(key["key_id"], True)]
    again = _sixnimmt("account", "create", "erin", url=url)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "exists already" in again.stderr


def test_the_api_over_postgresql(tmp_path: Path) -> None:
    with _store("postgresql", tmp_path) as store:
        upgrade(store)
        with site(tmp_path, engine=store) as api:
            alice = api.client()
            sent = alice.post("/v1/submissions", query={"name": "cautious"}, body=pack_archive(GOOD_BOT))
            assert wait_valid(alice, sent["id"])["version"] == "cautious@1"
            assert alice.post("/v1/versions/cautious@1/activate")["active"]
            assert [v["active"] for v in alice.get("/v1/versions")] == [True]
