"""The store's connections per process are bounded by SIXNIMMT_DB_POOL_SIZE and
SIXNIMMT_DB_MAX_OVERFLOW (docs/capacity.md: what a deployment's connection budget counts)."""

from __future__ import annotations

import pytest
import sqlalchemy.exc

from workers.store.engine import make_engine


def test_a_process_holds_at_most_pool_size_plus_overflow_connections(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIXNIMMT_DB_POOL_SIZE", "2")
    monkeypatch.setenv("SIXNIMMT_DB_MAX_OVERFLOW", "1")
    engine = make_engine(pg_url, pool_timeout=0.1)
    try:
        held = [engine.connect() for _ in range(3)]
        with pytest.raises(sqlalchemy.exc.TimeoutError):
            engine.connect()
        for conn in held:
            conn.close()
        # Given back: two stay open for the next use, the overflow one is closed.
        assert engine.pool.checkedin() == 2
    finally:
        engine.dispose()


def test_the_defaults_are_sqlalchemys(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIXNIMMT_DB_POOL_SIZE", raising=False)
    monkeypatch.delenv("SIXNIMMT_DB_MAX_OVERFLOW", raising=False)
    engine = make_engine(pg_url)
    try:
        assert (engine.pool.size(), engine.pool._max_overflow) == (5, 10)  # type: ignore[attr-defined]
    finally:
        engine.dispose()
