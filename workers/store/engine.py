"""The one place that builds the database engine, from ``SIXNIMMT_DATABASE_URL``.

Embedded default: a SQLite file in the per-user data directory
(``referee.settings.default_database_url``), in WAL mode, where every transaction takes the
write lock at BEGIN (``BEGIN IMMEDIATE``) so concurrent writers queue instead of failing
half-way. Production: PostgreSQL through psycopg 3. No other backend is supported.

A store *exists* once something made it: a SQLite file that is there, or a PostgreSQL database
that holds the schema (Alembic's version table). Only the commands that store something create
one (:func:`make_engine`); reading commands open an existing one (:func:`open_existing`), so a
mistyped path or the wrong working directory is reported, not silently made into an empty store.
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError

from referee.settings import default_database_url
from referee.settings import load as load_settings

SUPPORTED = "sqlite:///PATH or postgresql://USER@HOST/DB"
"""The backends, as a message names them."""


class StoreError(RuntimeError):
    """The store cannot be reached or used; the message says which database and why."""


class StoreMissingError(StoreError):
    """The store does not exist (yet); only commands that store something create one."""


def database_url(url: str | None = None) -> str:
    """The configured URL, the per-user default when none is set (``postgresql://`` means psycopg 3)."""
    url = url or load_settings().database_url or default_database_url()
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _parse(url: str) -> URL:
    """The URL parsed, if it names a supported backend (a bad one fails in one line)."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"SIXNIMMT_DATABASE_URL is not a database URL: {url!r}") from exc
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if (backend, driver) not in (("sqlite", "pysqlite"), ("postgresql", "psycopg")):
        named = backend if backend not in ("sqlite", "postgresql") else f"{backend}+{driver}"
        raise StoreError(f"SIXNIMMT_DATABASE_URL names a {named} database; the store is {SUPPORTED}")
    return parsed


def _sqlite_file(parsed: URL) -> Path | None:
    """The SQLite URL's file, ``None`` for an in-memory database."""
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def where(url: str | None = None) -> str:
    """The store's URL without its password, for messages (``sqlite:////path``, ``postgresql+psycopg://…``)."""
    return _parse(database_url(url)).render_as_string(hide_password=True)


def store_exists(url: str | None = None) -> bool:
    """Whether the store exists: its SQLite file is there, or its PostgreSQL database holds the schema.

    Creates nothing; an unreachable PostgreSQL raises the driver's ``OperationalError``.
    """
    url = database_url(url)
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite":
        path = _sqlite_file(parsed)
        return path is None or path.is_file()
    engine = create_engine(url, pool_pre_ping=True)
    try:
        with engine.connect() as connection:
            return inspect(connection).has_table("alembic_version")
    finally:
        engine.dispose()


def missing_store_message(url: str | None = None) -> str:
    """What a reading command says about a store that does not exist: where it looked, what makes one."""
    url = database_url(url)
    parsed = _parse(url)
    makers = "'sixnimmt league create' or 'sixnimmt bot submit' creates it"
    if parsed.get_backend_name() == "sqlite":
        default = url == database_url(default_database_url())
        how = "the default: SIXNIMMT_DATABASE_URL is unset" if default else "SIXNIMMT_DATABASE_URL"
        path = _sqlite_file(parsed)
        if not default and path is not None and not path.parent.is_dir():
            return f"no store at {path} ({how}): there is no directory {path.parent}"
        return f"no store at {path} ({how}): {makers}"
    shown = parsed.render_as_string(hide_password=True)
    return f"no store in {shown} (no sixnimmt schema yet): {makers}, or 'sixnimmt league migrate'"


def open_existing(url: str | None = None, **kwargs: Any) -> Engine:
    """An engine on a store that exists; :class:`StoreMissingError` (nothing created) if it does not."""
    if not store_exists(url):
        raise StoreMissingError(missing_store_message(url))
    return make_engine(url, **kwargs)


def make_engine(url: str | None = None, *, read_only: bool = False, **kwargs: Any) -> Engine:
    """An engine for the store; SQLite gets WAL, a busy timeout and immediate transactions.

    A SQLite file that is not there yet is created (its owner's only) in a directory that must
    exist, except the per-user default's directory, which is made. ``read_only`` (the dashboard)
    refuses writes and, on SQLite, begins transactions deferred: a WAL read snapshot that never
    takes the write lock, so readers never hold up the league.
    """
    url = database_url(url)
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite":
        path = _sqlite_file(parsed)
        if path is not None:
            _private_file(path, default=url == database_url(default_database_url()))
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
    # At most pool size + overflow connections per process (SIXNIMMT_DB_POOL_SIZE,
    # SIXNIMMT_DB_MAX_OVERFLOW): what a deployment's connection budget counts (docs/capacity.md).
    settings = load_settings()
    kwargs.setdefault("pool_size", settings.db_pool_size)
    kwargs.setdefault("max_overflow", settings.db_max_overflow)
    engine = create_engine(url, **kwargs)
    _ping_when_idle(engine)
    return engine


PING_IDLE_S = 1.0
"""A pooled connection given back less than this long ago is used without a ping first."""


def _ping_when_idle(engine: Engine) -> None:
    """SQLAlchemy's pre-ping, only for connections idle :data:`PING_IDLE_S` or longer.

    A connection that was idle (or is new to the pool) is tried with ``SELECT 1`` when taken
    from the pool, and replaced if the server has gone away (a restart, a failover, a cut link),
    as ``pool_pre_ping`` does; one given back a moment ago is not, since its link worked then.
    A worker takes a connection about nine times a block, one right after the other: the
    pre-ping on every one was a third of the store's round trips (docs/capacity.md).
    """

    @event.listens_for(engine.pool, "checkin")
    def _given_back(dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info["sixnimmt_returned"] = time.monotonic()

    @event.listens_for(engine.pool, "checkout")
    def _taken(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        returned = record.info.get("sixnimmt_returned")
        if returned is not None and time.monotonic() - returned < PING_IDLE_S:
            return
        try:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.close()
            dbapi_connection.rollback()  # no transaction left open by the ping
        except Exception as exc:
            # The pool throws this connection away and takes another (up to three times).
            raise DisconnectionError(f"the store's connection is gone: {exc}") from exc


def reading(engine: Engine) -> Connection:
    """A connection for reads (``with reading(engine) as conn:``): on PostgreSQL outside a
    transaction of its own, each statement its own.

    A read in a transaction of its own costs two more round trips (``BEGIN`` before it, and the
    ``ROLLBACK`` when the connection goes back to the pool) and sees nothing more: under READ
    COMMITTED, PostgreSQL's level here, every statement reads its own snapshot either way. A
    worker makes about five such reads a block (docs/capacity.md). SQLite, and a read-only
    engine (the dashboard's, whose read-only mode holds per transaction), keep their transaction.
    """
    conn = engine.connect()
    if _statements_alone(engine):
        conn.execution_options(isolation_level="AUTOCOMMIT")
    return conn


def one_statement(engine: Engine) -> AbstractContextManager[Connection]:
    """A connection for one writing statement (``with one_statement(engine) as conn:``): on
    PostgreSQL the statement is its own transaction (no ``BEGIN`` and ``COMMIT`` round trips
    around it: one statement is atomic alone); elsewhere a transaction as :meth:`Engine.begin`
    makes (SQLite's takes the write lock at ``BEGIN``). Only for exactly one statement."""
    if _statements_alone(engine):
        return reading(engine)
    return engine.begin()


def _statements_alone(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql" and not engine.get_execution_options().get(
        "postgresql_readonly"
    )


def _private_file(path: Path, *, default: bool) -> None:
    """Create the SQLite file readable by its owner only (its -wal and -shm files copy the mode):
    sandboxed bots run as other users and must not read the store. Only the per-user default's
    directory is created (its owner's only); another missing directory is an error, not made."""
    if path.exists():
        return
    if not path.parent.is_dir():
        if not default:
            raise StoreError(
                f"cannot create the store {path}: there is no directory {path.parent}"
                " (SIXNIMMT_DATABASE_URL names a file in a directory that must exist)"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreError(f"cannot create the store's directory {path.parent}: {exc.strerror}") from None
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: {exc.strerror}") from None


def describe(engine: Engine) -> str:
    """The engine's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)
