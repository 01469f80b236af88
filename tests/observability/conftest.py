"""Fixtures for the observability tests: a SQLite store, and a Redis database of the test's own."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
REDIS_DBS = range(15, 0, -1)
"""The Redis databases tests may borrow, under the same lock files as tests/workers (never 0)."""
LOCK_DIR = Path(tempfile.gettempdir())


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Any]:
    """A migrated SQLite store in the test's directory."""
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    store = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(store)
    yield store
    store.dispose()


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database no other test uses meanwhile (a lock file reserves it), flushed before and after."""
    import redis

    try:
        redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_timeout=5).ping()
    except Exception as exc:
        pytest.skip(f"Redis at {REDIS_HOST}:{REDIS_PORT} is not reachable: {exc}")
    for db in REDIS_DBS:
        handle = open(LOCK_DIR / f"sixnimmt-test-redis-{db}.lock", "w")  # noqa: SIM115 - held till the end
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=10)
        try:
            client.flushdb()
            yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
            client.flushdb()
        finally:
            client.close()
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    pytest.fail(f"every Redis database in {list(REDIS_DBS)} is in use by other tests")
