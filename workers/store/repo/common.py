"""What the store's modules share: the errors, names, times, and bot versions (a league's
entrants are bot versions, stored in the league's own transaction when new)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select

from workers.store.schema import artifacts, bot_versions, bots


class NotFoundError(LookupError):
    """No such bot, version, league or block."""


class ConflictError(ValueError):
    """The name is taken, or the request contradicts what is stored."""


class LeaseHeldError(ConflictError):
    """Another worker holds a live lease on the block: it is being played."""


class StoredCodeError(ValueError):
    """Stored code whose bytes do not hash to the sha256 it is stored under: never run."""


class BadNameError(ConflictError):
    """A bot or league name outside the safe charset or too long (refused, nothing stored)."""


MAX_NAME = 100
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-/@]*")


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it is a safe bot or league name, else raise :class:`BadNameError`.

    Letters, digits and ``_ . + - /`` (``@`` too in league names: a bot's ``@`` separates its
    version), starting with a letter or digit, at most :data:`MAX_NAME` characters, no ``..``,
    ``//`` or trailing ``/``. Names reach file names, URLs, logs and terminals: nothing else.
    """
    allowed = "letters, digits and _ . + - /" + (" @" if kind == "league" else "")
    if not isinstance(name, str) or not name:
        raise BadNameError(f"a {kind} needs a name: {allowed}")
    shown = repr(name[:40]) + ("…" if len(name) > 40 else "")
    if len(name) > MAX_NAME:
        raise BadNameError(f"{kind} name {shown} is {len(name)} characters long; at most {MAX_NAME}")
    bad = (
        not _NAME.fullmatch(name)
        or (kind != "league" and "@" in name)
        or ".." in name
        or "//" in name
        or name.endswith("/")
    )
    if bad:
        raise BadNameError(f"bad {kind} name {shown}: {allowed} only, starting with a letter or digit")
    return name


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(moment: dt.datetime | None) -> dt.datetime | None:
    """A stored time as UTC (SQLite hands them back naive)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class BotVersion:
    """An immutable bot version and where its code is."""

    id: int
    bot: str
    version: int
    sha256: str
    entry_point: str
    variant: str
    retired: bool = False
    """Retired (``sixnimmt bot retire``): it enters no new league (:func:`refuse_retired`)."""


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A bot version checked and ready to store, not stored yet (stored with the league that names it)."""

    bot: str
    content: bytes
    sha256: str
    entry_point: str
    variant: str


def _add_version(conn: Any, new: NewVersion) -> tuple[BotVersion, bool]:
    """:func:`add_bot_version` inside the caller's transaction."""
    name = check_name("bot", new.bot)
    bot_id = conn.execute(select(bots.c.id).where(bots.c.name == name)).scalar()
    if bot_id is None:
        bot_id = conn.execute(insert(bots).values(name=name).returning(bots.c.id)).scalar_one()
    existing = conn.execute(
        select(bot_versions).where(bot_versions.c.bot_id == bot_id, bot_versions.c.sha256 == new.sha256)
    ).first()
    if existing is not None:
        return _version(existing, name), False
    if conn.execute(select(artifacts.c.sha256).where(artifacts.c.sha256 == new.sha256)).first() is None:
        if hashlib.sha256(new.content).hexdigest() != new.sha256:
            raise StoredCodeError(f"the code of {name} does not hash to the sha256 {new.sha256[:12]}… given")
        conn.execute(insert(artifacts).values(sha256=new.sha256, content=new.content, size=len(new.content)))
    number = (
        conn.execute(select(func.max(bot_versions.c.version)).where(bot_versions.c.bot_id == bot_id)).scalar()
        or 0
    ) + 1
    row = conn.execute(
        insert(bot_versions)
        .values(
            bot_id=bot_id, version=number, sha256=new.sha256, entry_point=new.entry_point, variant=new.variant
        )
        .returning(*bot_versions.c)
    ).one()
    return _version(row, name), True


def _version(row: Any, name: str) -> BotVersion:
    retired = getattr(row, "retired_at", None) is not None
    return BotVersion(row.id, name, row.version, row.sha256, row.entry_point, row.variant, retired)


class RetiredError(ConflictError):
    """A retired bot version was named to enter a league."""


def refuse_retired(conn: Any, versions: Sequence[BotVersion]) -> None:
    """Raise :class:`RetiredError` if any of ``versions`` is retired (read in the caller's transaction)."""
    ids = sorted({v.id for v in versions})
    if not ids:
        return
    rows = conn.execute(
        select(bot_versions.c.version, bots.c.name)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bot_versions.c.id.in_(ids), bot_versions.c.retired_at.is_not(None))
        .order_by(bots.c.name, bot_versions.c.version)
    ).all()
    if rows:
        named = ", ".join(f"{r.name}@{r.version}" for r in rows)
        raise RetiredError(
            f"{named} {'is' if len(rows) == 1 else 'are'} retired: a retired version enters no new league"
            f" ('sixnimmt bot unretire {rows[0].name}@{rows[0].version}' brings it back)"
        )
