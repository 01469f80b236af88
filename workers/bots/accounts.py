"""Participant accounts and their API keys: how a participant submits bots through the API
(``sixnimmt api serve``, docs/api.md) and how a bot on its author's machine enters leagues.

An account owns bots (``bot_owners``: :mod:`workers.store.repo.accounts`); the operator's and the
reference bots belong to the platform (no account).

An account ``NAME`` plays in leagues as the bot ``remote/NAME`` (one stored version per game,
created on first use, whose entry point ``remote:NAME`` marks it remote: the league seats it
through the referee instead of starting a process). Its keys are ``snk_<key id>_<secret>``: the
store keeps the key id, the SHA-256 of the whole key and the key's limits, never the key, which
is shown once, when it is made. A revoked key stays listed with the time it was revoked.

The referee never reads the store (an import contract): the league hands it the hashes of
the keys that are not revoked through an admin call (:func:`referee_keys`, ``SetRemoteKeys``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, insert, select, update

from workers.bots.artifacts import pack
from workers.store import repo
from workers.store.schema import api_keys, blocks, bot_accounts, bot_owners, bot_versions, bots

KEY_PREFIX = "snk_"
REMOTE_BOT_PREFIX = "remote/"
"""An account's bot in the store: ``remote/NAME``."""
REMOTE_ENTRANT = "remote:"
"""How ``--bots`` names an account (``remote:NAME``), and the entry point of its stored versions."""
DEFAULT_MAX_CONNECTIONS = 2
DEFAULT_MAX_MATCHES = 64
LIMIT_RANGE = range(1, 10_001)


@dataclass(frozen=True, slots=True)
class Key:
    """An API key as stored: everything but the key."""

    key_id: str
    account: str
    max_connections: int
    max_matches: int
    created_at: dt.datetime | None
    revoked_at: dt.datetime | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "account": self.account,
            "max_connections": self.max_connections,
            "max_matches": self.max_matches,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def key_hash(key: str) -> str:
    """The SHA-256 of a key, hex: what the store and the referee keep.

    A key holds 256 random bits, so a plain hash is enough: nothing can be guessed from it, and
    no slow hash is needed against a dictionary (there is none for random keys).
    """
    return hashlib.sha256(key.encode()).hexdigest()


def make_key() -> tuple[str, str]:
    """A fresh key and its id: ``(key_id, "snk_<key_id>_<secret>")``."""
    key_id = secrets.token_hex(6)
    return key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def bot_name(account: str) -> str:
    """The stored bot an account plays as."""
    return f"{REMOTE_BOT_PREFIX}{account}"


def create_account(engine: Engine, name: str, display_name: str | None = None) -> dict[str, Any]:
    """Create the account ``name`` and its bot ``remote/NAME`` (which it owns); a taken name is a
    ConflictError. ``display_name``: the name its pages show (default: ``name``)."""
    repo.check_name("account", name)
    if "/" in name:
        raise repo.BadNameError(f"account name {name!r}: letters, digits and _ . + - (no /)")
    if display_name is not None:
        display_name = " ".join(display_name.split())
        if not display_name or len(display_name) > repo.MAX_NAME or not display_name.isprintable():
            raise repo.BadNameError(f"a display name is 1 to {repo.MAX_NAME} printable characters")
    with engine.begin() as conn:
        if conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.name == name)).first():
            raise repo.ConflictError(f"a bot account {name!r} exists already")
        if conn.execute(select(bots.c.id).where(bots.c.name == bot_name(name))).first():
            raise repo.ConflictError(f"a bot named {bot_name(name)!r} is stored already")
        bot_id = conn.execute(insert(bots).values(name=bot_name(name)).returning(bots.c.id)).scalar_one()
        account_id = conn.execute(
            insert(bot_accounts)
            .values(name=name, bot_id=bot_id, display_name=display_name)
            .returning(bot_accounts.c.id)
        ).scalar_one()
        conn.execute(insert(bot_owners).values(bot_id=bot_id, account_id=account_id))
    return {"account": name, "display_name": display_name or name, "bot": bot_name(name)}


def _account_id(conn: Any, name: str) -> int:
    found = conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.name == name)).scalar()
    if found is None:
        raise repo.NotFoundError(
            f"no bot account {name!r}: create it with 'sixnimmt bot account create {name}'"
        )
    return int(found)


def _limit(what: str, value: int) -> int:
    if value not in LIMIT_RANGE:
        raise repo.ConflictError(f"{what} must be from 1 to {LIMIT_RANGE[-1]}, got {value}")
    return value


def create_key(
    engine: Engine,
    account: str,
    *,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_matches: int = DEFAULT_MAX_MATCHES,
) -> tuple[Key, str]:
    """A new key of ``account``: the stored key and the key itself (shown once, never stored)."""
    _limit("--max-connections", max_connections)
    _limit("--max-matches", max_matches)
    key_id, key = make_key()
    with engine.begin() as conn:
        account_id = _account_id(conn, account)
        conn.execute(
            insert(api_keys).values(
                key_id=key_id,
                account_id=account_id,
                sha256=key_hash(key),
                max_connections=max_connections,
                max_matches=max_matches,
            )
        )
    return find_key(engine, key_id), key


def _key_query() -> Any:
    return select(api_keys, bot_accounts.c.name.label("account")).join(
        bot_accounts, bot_accounts.c.id == api_keys.c.account_id
    )


def _key(row: Any) -> Key:
    return Key(
        row.key_id,
        row.account,
        row.max_connections,
        row.max_matches,
        repo._aware(row.created_at),
        repo._aware(row.revoked_at),
    )


def _key_id_of(text: str) -> str:
    """A key id from a key id or a whole key (``snk_<id>_…``)."""
    if text.startswith(KEY_PREFIX):
        return text[len(KEY_PREFIX) :].split("_", 1)[0]
    return text


def find_key(engine: Engine, key_id: str) -> Key:
    """The stored key with this id (or of this whole key)."""
    with engine.connect() as conn:
        row = conn.execute(_key_query().where(api_keys.c.key_id == _key_id_of(key_id))).first()
    if row is None:
        raise repo.NotFoundError(f"no API key {key_id!r} ('sixnimmt bot key list' shows the keys)")
    return _key(row)


def revoke_key(engine: Engine, key_id: str) -> Key:
    """Revoke a key (the referee refuses it from the next key update on); revoking twice is an error."""
    key = find_key(engine, key_id)
    if key.revoked:
        raise repo.ConflictError(
            f"API key {key.key_id} was revoked already, at {key.revoked_at:%Y-%m-%d %H:%M:%S}"
        )
    with engine.begin() as conn:
        conn.execute(
            update(api_keys)
            .where(api_keys.c.key_id == key.key_id, api_keys.c.revoked_at.is_(None))
            .values(revoked_at=func.now())
        )
    return find_key(engine, key.key_id)


def list_keys(engine: Engine, account: str | None = None) -> list[Key]:
    """Every key (of ``account``), oldest first, revoked ones included."""
    query = _key_query().order_by(api_keys.c.id)
    with engine.connect() as conn:
        if account is not None:
            query = query.where(api_keys.c.account_id == _account_id(conn, account))
        return [_key(row) for row in conn.execute(query)]


def list_accounts(engine: Engine) -> list[dict[str, Any]]:
    """Every account with its bot and how many keys it has (live and revoked)."""
    return [{k: row[k] for k in ("account", "bot", "keys", "revoked")} for row in list_participants(engine)]


def list_participants(engine: Engine) -> list[dict[str, Any]]:
    """Every account with its remote bot, how many keys it has (live and revoked) and how many bots
    it owns besides its remote bot."""
    live = func.count(api_keys.c.id).filter(api_keys.c.revoked_at.is_(None))
    query = (
        select(
            bot_accounts.c.id,
            bot_accounts.c.name,
            bot_accounts.c.display_name,
            func.count(api_keys.c.id).label("keys"),
            live.label("live"),
        )
        .outerjoin(api_keys, api_keys.c.account_id == bot_accounts.c.id)
        .group_by(bot_accounts.c.id, bot_accounts.c.name, bot_accounts.c.display_name)
        .order_by(bot_accounts.c.name)
    )
    owned = (
        select(bot_owners.c.account_id, func.count().label("bots"))
        .join(bot_accounts, bot_accounts.c.id == bot_owners.c.account_id)
        .where(bot_owners.c.bot_id != bot_accounts.c.bot_id)
        .group_by(bot_owners.c.account_id)
    )
    with engine.connect() as conn:
        bots_of = {r.account_id: int(r.bots) for r in conn.execute(owned)}
        return [
            {
                "account": r.name,
                "display_name": r.display_name or r.name,
                "bot": bot_name(r.name),
                "keys": int(r.live),
                "revoked": int(r.keys - r.live),
                "bots": bots_of.get(r.id, 0),
            }
            for r in conn.execute(query)
        ]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who presented a key that is live: the key's id and its account."""

    key_id: str
    account_id: int
    account: str
    display_name: str


def authenticate(engine: Engine, key: str) -> Caller | None:
    """The account of a live key (``None``: no such key, or revoked). The key is looked up by its
    SHA-256, which is unique: the key itself is never compared, logged nor stored."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    with engine.connect() as conn:
        row = conn.execute(
            select(api_keys.c.key_id, bot_accounts.c.id, bot_accounts.c.name, bot_accounts.c.display_name)
            .join(bot_accounts, bot_accounts.c.id == api_keys.c.account_id)
            .where(api_keys.c.sha256 == key_hash(key), api_keys.c.revoked_at.is_(None))
        ).first()
    if row is None:
        return None
    return Caller(row.key_id, int(row.id), row.name, row.display_name or row.name)


def referee_keys(engine: Engine) -> list[dict[str, Any]]:
    """The keys the referee accepts (not revoked): id, account, hash and limits, never a key."""
    return referee_key_set(engine)[0]


def referee_key_set(engine: Engine) -> tuple[list[dict[str, Any]], int]:
    """:func:`referee_keys` and the generation they were read at, from one statement.

    The generation is one more than the number of keys made plus the number revoked: keys are
    never deleted and a revocation is final, so it grows with every change and two reads of the
    same state agree. It starts at 1, since 0 is the protocol's "not ordered".
    One statement reads both, so they come from the same snapshot (PostgreSQL's read committed
    gives each statement its own).
    """
    with engine.connect() as conn:
        rows = list(conn.execute(_key_query().order_by(api_keys.c.id)))
    live = [
        {
            "key_id": r.key_id,
            "account": r.account,
            "sha256": r.sha256,
            "max_connections": r.max_connections,
            "max_matches": r.max_matches,
        }
        for r in rows
        if r.revoked_at is None
    ]
    return live, 1 + len(rows) + sum(r.revoked_at is not None for r in rows)


# -- accounts as league entrants -----------------------------------------------------------


def is_remote_ref(ref: str) -> bool:
    """Whether a ``--bots`` item names a bot account (``remote:NAME``)."""
    return ref.startswith(REMOTE_ENTRANT)


def remote_account(version: repo.BotVersion) -> str | None:
    """The account a stored version stands for, ``None`` for a bot with code."""
    if version.entry_point.startswith(REMOTE_ENTRANT):
        return version.entry_point[len(REMOTE_ENTRANT) :]
    return None


def remote_entrant(engine: Engine | None, ref: str, variant: str) -> repo.BotVersion | repo.NewVersion:
    """The version ``remote:NAME`` enters a league of ``variant`` as: stored, or to store with it.

    The version's artifact is a short text that says what it is (the store's bots all have one;
    it is never run): its content names the account and the game, so each game gets a version.
    """
    account = ref[len(REMOTE_ENTRANT) :]
    if engine is None:
        raise repo.NotFoundError(
            f"no bot account {account!r}: create it with 'sixnimmt bot account create {account}'"
        )
    with engine.connect() as conn:
        _account_id(conn, account)
        row = conn.execute(
            select(bot_versions)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(bots.c.name == bot_name(account), bot_versions.c.variant == variant)
            # Only the account's own versions (no code): never code stored under its name.
            .where(bot_versions.c.entry_point == f"{REMOTE_ENTRANT}{account}")
            .order_by(bot_versions.c.version.desc())
        ).first()
    if row is not None:
        return repo.BotVersion(
            row.id, bot_name(account), row.version, row.sha256, row.entry_point, row.variant
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "remote.py"
        path.write_text(
            f'"""The bot account {account!r}, playing {variant} from its author\'s machine.\n\n'
            "Its matches are played over the referee by `sixnimmt bot connect`; this file is never run.\n"
            '"""\n'
        )
        artifact = pack(path, max_bytes=1 << 12)
    return repo.NewVersion(bot_name(account), artifact.content, artifact.sha256, ref, variant)


def set_waiting(engine: Engine, block_id: int, waiting: str | None) -> None:
    """Say what a claimed block waits for (``None``: nothing), for ``league status``."""
    with engine.begin() as conn:
        conn.execute(update(blocks).where(blocks.c.id == block_id).values(waiting=waiting))


def waiting_blocks(engine: Engine, league_id: int) -> list[dict[str, Any]]:
    """The league's running blocks that wait for something, and what."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(blocks.c.number, blocks.c.waiting)
            .where(
                blocks.c.league_id == league_id, blocks.c.status == "running", blocks.c.waiting.is_not(None)
            )
            .order_by(blocks.c.number)
        )
        return [{"block": r.number, "waiting": r.waiting} for r in rows]
