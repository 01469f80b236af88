"""Fixtures of the dashboard's tests: the played league on SQLite and on PostgreSQL (see dashkit)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from dashkit import PG, LeagueStore, play_league


def _pg_admin() -> Any:
    import psycopg

    return psycopg.connect(**PG, dbname="postgres", autocommit=True, connect_timeout=5)


@pytest.fixture(scope="session")
def sqlite_league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeagueStore]:
    url = f"sqlite:///{tmp_path_factory.mktemp('dashboard') / 'store.db'}"
    store = play_league(url)
    yield store
    store.engine.dispose()


@pytest.fixture(scope="session")
def postgresql_league() -> Iterator[LeagueStore]:
    try:
        with socket.create_connection((PG["host"], PG["port"]), timeout=2):
            pass
        admin = _pg_admin()
    except Exception as exc:  # no server here: the SQLite runs still cover the dashboard
        pytest.skip(f"PostgreSQL at {PG['host']}:{PG['port']} cannot be reached: {exc}")
    # The sixnimmt_test_<pid>_<n> pattern lets the league tests drop it if this session dies.
    database = f"sixnimmt_test_{os.getpid()}_{800 + int(time.time()) % 100}"
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{database}"')
    store = play_league(f"postgresql://{PG['user']}@{PG['host']}:{PG['port']}/{database}")
    try:
        yield store
    finally:
        store.engine.dispose()
        with _pg_admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def league_store(request: pytest.FixtureRequest) -> LeagueStore:
    """The played league, on each database the dashboard supports."""
    return request.getfixturevalue(f"{request.param}_league")
