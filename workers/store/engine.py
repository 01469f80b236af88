"""The one place that builds the database engine, from ``SIXNIMMT_DATABASE_URL``.

Embedded default: a SQLite file in the working directory, in WAL mode, where every
transaction takes the write lock at BEGIN (``BEGIN IMMEDIATE``) so concurrent writers queue
instead of failing half-way. Production: PostgreSQL through psycopg 3.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from referee.settings import load as load_settings


class StoreError(RuntimeError):
    """The store cannot be reached or used; the message says which database and why."""


def database_url(url: str | None = None) -> str:
    """The configured URL (``postgresql://`` is taken to mean psycopg 3)."""
    url = url or load_settings().database_url
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str | None = None, *, read_only: bool = False, **kwargs: Any) -> Engine:
    """An engine for the store; SQLite gets WAL, a busy timeout and immediate transactions.

    ``read_only`` (the dashboard) refuses writes and, on SQLite, begins transactions deferred:
    a WAL read snapshot that never takes the write lock, so readers never hold up the league.
    """
    url = database_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"SIXNIMMT_DATABASE_URL is not a database URL: {url!r}") from exc
    if parsed.get_backend_name() == "sqlite":
        _private_file(parsed.database)
        engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, _: Any) -> None:
            # Let SQLAlchemy, not the driver, decide when transactions begin.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            if read_only:
                cursor.execute("PRAGMA query_only=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

        return engine
    if read_only:
        kwargs.setdefault("execution_options", {"postgresql_readonly": True})
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _private_file(database: str | None) -> None:
    """Create the SQLite file readable by its owner only (its -wal and -shm files copy the mode):
    sandboxed bots run as other users and must not read the store."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def describe(engine: Engine) -> str:
    """The engine's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)
