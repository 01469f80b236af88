"""Fixtures for the observability tests: a SQLite store, and a Redis database of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import borrowed_redis


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
    """A Redis database no other test uses meanwhile (testkit.borrowed_redis)."""
    with borrowed_redis() as url:
        yield url
