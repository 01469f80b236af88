"""Bots: their versions and the code they run (artifacts, checked against their sha256)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Engine, case, select, update

from workers.store.repo.common import (
    BotVersion,
    NewVersion,
    NotFoundError,
    StoredCodeError,
    _add_version,
    _now,
    _version,
    check_name,
)
from workers.store.schema import artifacts, bot_versions, bots


def add_bot_version(
    engine: Engine, name: str, content: bytes, sha256: str, entry_point: str, variant: str
) -> tuple[BotVersion, bool]:
    """Store a bot version (one transaction); returns it and whether it is new.

    Submitting the same content again for the same bot returns the existing version.
    """
    check_name("bot", name)
    with engine.begin() as conn:
        return _add_version(conn, NewVersion(name, content, sha256, entry_point, variant))


def find_content(engine: Engine, name: str, sha256: str) -> BotVersion | None:
    """The version of bot ``name`` that holds exactly this code, if one is stored."""
    with engine.connect() as conn:
        row = conn.execute(
            select(bot_versions, bots.c.name)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(bots.c.name == name, bot_versions.c.sha256 == sha256)
        ).first()
    return None if row is None else _version(row, row.name)


def labels_apart(labels: Sequence[str]) -> list[str]:
    """Entrant labels by position, each one apart: a label that occurs k > 1 times gets ``#1`` … ``#k``.

    A league may enter one bot version several times on purpose (``heuristic*2``).
    """
    seen: dict[str, int] = {}
    repeated = {label for label in labels if labels.count(label) > 1}
    out = []
    for label in labels:
        if label in repeated:
            seen[label] = seen.get(label, 0) + 1
            label = f"{label}#{seen[label]}"
        out.append(label)
    return out


def find_version(engine: Engine, ref: str) -> BotVersion:
    """A version by ``name`` (the newest one not retired) or ``name@N`` (retired or not: a league
    refuses a retired one, :func:`workers.store.repo.common.refuse_retired`)."""
    name, _, number = ref.partition("@")
    query = (
        select(bot_versions, bots.c.name)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bots.c.name == name)
    )
    if number:
        if not number.isdigit():
            raise NotFoundError(f"bad version in {ref!r}: expected name@N")
        query = query.where(bot_versions.c.version == int(number))
    with engine.connect() as conn:
        # The newest version not retired, else the newest (which a league then refuses, saying why).
        retired_last = case((bot_versions.c.retired_at.is_(None), 0), else_=1)
        row = conn.execute(query.order_by(retired_last, bot_versions.c.version.desc())).first()
    if row is None:
        raise NotFoundError(f"no bot {ref!r} in the store (submit it with 'sixnimmt bot submit')")
    return _version(row, row.name)


def set_retired(engine: Engine, ref: str, retired: bool) -> list[BotVersion]:
    """Retire (or bring back) ``name@N``, or every version of ``name``; returns the versions whose
    state changed (none: they were so already). A retired version enters no new league; the
    leagues it played keep it, their results and transcripts unchanged."""
    name, _, number = ref.partition("@")
    if number and not number.isdigit():
        raise NotFoundError(f"bad version in {ref!r}: expected name@N")
    query = (
        select(bot_versions, bots.c.name)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bots.c.name == name)
        .order_by(bot_versions.c.version)
    )
    if number:
        query = query.where(bot_versions.c.version == int(number))
    with engine.begin() as conn:
        rows = conn.execute(query.with_for_update(of=bot_versions)).all()
        if not rows:
            raise NotFoundError(f"no bot {ref!r} in the store")
        changed = [r for r in rows if (r.retired_at is not None) != retired]
        if changed:
            conn.execute(
                update(bot_versions)
                .where(bot_versions.c.id.in_([r.id for r in changed]))
                .values(retired_at=_now() if retired else None)
            )
    return [replace(_version(r, r.name), retired=retired) for r in changed]


def list_bots(engine: Engine) -> list[dict[str, Any]]:
    """Every bot with its versions, newest first."""
    query = (
        select(
            bots.c.name,
            bot_versions.c.version,
            bot_versions.c.sha256,
            bot_versions.c.variant,
            bot_versions.c.entry_point,
            bot_versions.c.created_at,
            bot_versions.c.retired_at,
            artifacts.c.size,
        )
        .join(bot_versions, bot_versions.c.bot_id == bots.c.id)
        .join(artifacts, artifacts.c.sha256 == bot_versions.c.sha256)
        .order_by(bots.c.name, bot_versions.c.version.desc())
    )
    with engine.connect() as conn:
        return [
            {
                "name": r.name,
                "version": r.version,
                "sha256": r.sha256,
                "variant": r.variant,
                "entry_point": r.entry_point,
                "size": r.size,
                "created_at": r.created_at.isoformat() if r.created_at else None,
                "retired": r.retired_at is not None,
                "retired_at": r.retired_at.isoformat() if r.retired_at else None,
            }
            for r in conn.execute(query)
        ]


def artifact(engine: Engine, sha256: str, *, owner: str | None = None) -> bytes:
    """A stored artifact's content, checked against its address: :class:`StoredCodeError` if the
    bytes in the store no longer hash to ``sha256`` (changed behind the platform's back).

    ``owner`` (``NAME@V``) names the version in that error.
    """
    with engine.connect() as conn:
        content = conn.execute(select(artifacts.c.content).where(artifacts.c.sha256 == sha256)).scalar()
    if content is None:
        raise NotFoundError(f"no artifact {sha256}")
    data = bytes(content)
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise StoredCodeError(
            f"stored code of {owner or 'artifact ' + sha256[:12]} does not match its sha256 {sha256[:12]}…"
            f" (the store holds bytes that hash to {found[:12]}…): refused, never run"
        )
    return data


def code_of(engine: Engine, version: BotVersion) -> bytes:
    """A version's code (its archive), checked against its sha256 as :func:`artifact` does."""
    return artifact(engine, version.sha256, owner=f"{version.bot}@{version.version}")
