"""The API tests' kit: a store with an account and its key, and the API served on a free port in a
thread (a real uvicorn over a real socket), reached over HTTP by the SDK's own client."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from testkit import wait_for

from api.app import create_app, serving
from bot_sdk.client import Client
from referee.settings import load
from workers.bots import accounts
from workers.store import schema
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

PROJECT = Path(__file__).resolve().parents[2]
GOOD_BOT = PROJECT / "examples" / "cautious_bot.py"
OUTSIDE_TREE = Path(tempfile.gettempdir())
"""Where the tests' commands run: not the tree, whose build leftovers (a ``sixnimmt_arena.egg-info``)
would stand before the installed package's metadata on ``sys.path``."""


@dataclass
class Site:
    """A served API: its URL, store, and one key per account."""

    url: str
    engine: Engine
    keys: dict[str, str]
    app: Any

    def client(self, account: str = "alice") -> Client:
        return Client(self.url, self.keys[account])


def new_store(directory: Path) -> Engine:
    engine = make_engine(f"sqlite:///{directory / 'store.db'}")
    upgrade(engine)
    return engine


def account(engine: Engine, name: str) -> str:
    """Create an account; its key."""
    accounts.create_account(engine, name)
    return accounts.create_key(engine, name)[1]


@contextlib.contextmanager
def site(
    directory: Path, env: Mapping[str, str] | None = None, *, engine: Engine | None = None, **options: Any
) -> Iterator[Site]:
    """The API over a fresh store (or ``engine``) with the accounts alice and bob."""
    engine = engine or new_store(directory)
    keys = {name: account(engine, name) for name in ("alice", "bob")}
    app = create_app(engine, load(dict(env or {})), **options)
    try:
        with serving(app) as url:
            yield Site(url, engine, keys, app)
    finally:
        engine.dispose()


def counts(engine: Engine) -> dict[str, int]:
    """Rows of every table that holds bots, code or submissions."""
    tables = ("bots", "bot_versions", "artifacts", "bot_owners", "active_versions", "submissions")
    with engine.connect() as conn:
        return {
            name: int(
                conn.execute(select(func.count()).select_from(schema.metadata.tables[name])).scalar_one()
            )
            for name in tables
        }


def wait_done(client: Client, submission: int, timeout: float = 240) -> dict[str, Any]:
    """The submission once its validation has ended (valid or invalid)."""

    def ended() -> dict[str, Any] | None:
        found = client.get(f"/v1/submissions/{submission}")
        return found if found["status"] != "pending" else None

    return wait_for(ended, timeout, f"submission {submission}'s validation", interval=0.2)


def wait_valid(client: Client, submission: int) -> dict[str, Any]:
    found = wait_done(client, submission)
    assert found["status"] == "valid", found
    return found


def one_league_match(
    engine: Engine, mine_ref: str, transcript: dict[str, Any], *, detail: str | None = None
) -> int:
    """The id of a league ``cup`` of ``mine_ref`` against the reference random bot, its one match stored: the
    version scores 70 with a timeout (``detail`` its stored fault detail), the random bot 20."""
    from workers.bots.submit import store_reference
    from workers.store import repo

    mine = repo.find_version(engine, mine_ref)
    other = store_reference(engine, "classic", "random")
    league_id = repo.create_league(
        engine,
        "cup",
        variant="classic",
        config={},
        seed=1,
        format="round-robin",
        table_size=2,
        deals=1,
        entrants=[mine, other],
        planned=[(0, 11, [0, 1])],
    )
    block = repo.blocks_of(engine, league_id)[0]
    seats = [
        repo.SeatRecord(0, 0, mine.id, 70, 2, {"timeout": 1}, 1, False, 10, detail),
        repo.SeatRecord(1, 1, other.id, 20, 1, {}, 0, False, 10, None),
    ]
    played = repo.MatchRecordRow(0, 11, "sha256:" + "0" * 64, "finished", seats, transcript)
    assert repo.record_block(engine, block.id, [played])
    return league_id
