"""Who is on the store: its own id (every message to the workers names it) and the workers'
heartbeats."""

from __future__ import annotations

import datetime as dt
import weakref

from sqlalchemy import Engine, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from workers.store.engine import StoreError
from workers.store.repo.common import _aware, _now
from workers.store.schema import leagues, store_identity, workers


class StoreIdentityError(StoreError):
    """The store has no id: it is older than the schema that writes one (``league migrate``)."""


_STORE_IDS: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()


def store_id(engine: Engine) -> str:
    """The store's id, written once at migration (``store_identity``): every message to the
    workers names it, and a worker plays only messages that name its own store's.

    Read once per engine (it never changes). :class:`StoreIdentityError` (a :class:`StoreError`,
    which the workers retry) while the store is not migrated yet.
    """
    known = _STORE_IDS.get(engine)
    if known is not None:
        return known
    try:
        with engine.connect() as conn:
            known = conn.execute(select(store_identity.c.id)).scalar()
    except (OperationalError, ProgrammingError):
        # No such table: a store of an older schema has its leagues but no id; anything else
        # (no schema at all, a database that cannot be reached) is the error it is.
        tables = inspect(engine)
        if tables.has_table(store_identity.name) or not tables.has_table(leagues.name):
            raise
        known = None
    if not known:
        raise StoreIdentityError(
            "the store has no id yet (a schema older than its messages to the workers):"
            " bring it up to date with 'sixnimmt league migrate'"
        )
    _STORE_IDS[engine] = str(known)
    return str(known)


def heartbeat(engine: Engine, name: str, started_at: dt.datetime) -> None:
    """Record that the worker ``name`` is alive now."""
    now = _now()
    with engine.begin() as conn:
        done = conn.execute(update(workers).where(workers.c.name == name).values(seen_at=now))
        if done.rowcount == 0:
            try:
                with conn.begin_nested():
                    conn.execute(insert(workers).values(name=name, started_at=started_at, seen_at=now))
            except IntegrityError:
                conn.execute(update(workers).where(workers.c.name == name).values(seen_at=now))


def last_worker_seen(engine: Engine) -> dt.datetime | None:
    """When any worker last wrote its heartbeat (``None``: no worker ever ran on this store)."""
    with engine.connect() as conn:
        return _aware(conn.execute(select(func.max(workers.c.seen_at))).scalar())
