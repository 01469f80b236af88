"""Reads and writes of the league store. Every write that must be whole is one transaction."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine, case, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from workers.planning.deals import deal_seed
from workers.store.engine import StoreError
from workers.store.schema import (
    FAULT_COLUMNS,
    artifacts,
    blocks,
    bot_versions,
    bots,
    league_entrants,
    leagues,
    matches,
    ratings,
    seat_results,
    store_identity,
    transcripts,
    workers,
)


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


# -- bots ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BotVersion:
    """An immutable bot version and where its code is."""

    id: int
    bot: str
    version: int
    sha256: str
    entry_point: str
    variant: str


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A bot version checked and ready to store, not stored yet (stored with the league that names it)."""

    bot: str
    content: bytes
    sha256: str
    entry_point: str
    variant: str


def add_bot_version(
    engine: Engine, name: str, content: bytes, sha256: str, entry_point: str, variant: str
) -> tuple[BotVersion, bool]:
    """Store a bot version (one transaction); returns it and whether it is new.

    Submitting the same content again for the same bot returns the existing version.
    """
    check_name("bot", name)
    with engine.begin() as conn:
        return _add_version(conn, NewVersion(name, content, sha256, entry_point, variant))


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


def find_content(engine: Engine, name: str, sha256: str) -> BotVersion | None:
    """The version of bot ``name`` that holds exactly this code, if one is stored."""
    with engine.connect() as conn:
        row = conn.execute(
            select(bot_versions, bots.c.name)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(bots.c.name == name, bot_versions.c.sha256 == sha256)
        ).first()
    return None if row is None else _version(row, row.name)


def _version(row: Any, name: str) -> BotVersion:
    return BotVersion(row.id, name, row.version, row.sha256, row.entry_point, row.variant)


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
    """A version by ``name`` (the newest) or ``name@N``."""
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
        row = conn.execute(query.order_by(bot_versions.c.version.desc())).first()
    if row is None:
        raise NotFoundError(f"no bot {ref!r} in the store (submit it with 'sixnimmt bot submit')")
    return _version(row, row.name)


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


# -- leagues ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class League:
    """A league's definition."""

    id: int
    name: str
    variant: str
    config: dict[str, Any]
    seed: int
    format: str
    table_size: int
    deals: int
    entrants: tuple[BotVersion, ...]
    seat_key: bytes
    stopping: dict[str, Any] | None = None
    """How a league that adds deals as it goes decides its next ones (``workers.planning.rounds``); ``None``:
    a fixed plan."""
    fresh_processes: bool = False
    """Every block starts its own bot processes (``league create --fresh-processes``), none warm."""
    deal_key: bytes | None = None
    """Secret key of the deal seeds (:mod:`workers.planning.deals`); ``None``: deals follow the seed."""


@dataclass(frozen=True, slots=True)
class BlockRow:
    """A block as stored."""

    id: int
    league_id: int
    number: int
    seed: int
    entrants: tuple[int, ...]
    status: str
    attempts: int
    """How many times the block was claimed; the current claim's fencing number."""
    claimed_by: str | None = None
    lease_until: dt.datetime | None = None

    @property
    def claim(self) -> tuple[str, int]:
        """The claim this row shows: (worker, attempt)."""
        return (self.claimed_by or "", self.attempts)


def create_league(
    engine: Engine,
    name: str,
    *,
    variant: str,
    config: Mapping[str, Any],
    seed: int,
    format: str,
    table_size: int,
    deals: int,
    entrants: Sequence[BotVersion | NewVersion],
    planned: Iterable[tuple[int, int, Sequence[int]]],
    stopping: Mapping[str, Any] | None = None,
    fresh_processes: bool = False,
    deal_key: bytes | None = None,
) -> int:
    """Store a league with its entrants and planned blocks ``(number, seed, entrants)``: all or nothing.

    Entrants not stored yet (:class:`NewVersion`: bot files and reference bots named on the command
    line) are stored in the same transaction, so a league that cannot be stored stores no bot either.
    With a ``deal_key``, each block is stored with the deal seed its plan seed gives under the key
    (:func:`workers.planning.deals.deal_seed`; :func:`add_blocks` does the same for the blocks added later).
    """
    check_name("league", name)
    for entrant in entrants:
        if isinstance(entrant, NewVersion):
            check_name("bot", entrant.bot)
    with engine.begin() as conn:
        stored: dict[NewVersion, BotVersion] = {}
        for entrant in entrants:
            if isinstance(entrant, NewVersion) and entrant not in stored:
                stored[entrant] = _add_version(conn, entrant)[0]
        versions = [stored[e] if isinstance(e, NewVersion) else e for e in entrants]
        try:
            league_id = conn.execute(
                insert(leagues)
                .values(
                    name=name,
                    variant=variant,
                    config=dict(config),
                    seed=seed,
                    format=format,
                    table_size=table_size,
                    deals=deals,
                    seat_key=os.urandom(32),
                    deal_key=deal_key,
                    stopping=None if stopping is None else dict(stopping),
                    fresh_processes=fresh_processes,
                )
                .returning(leagues.c.id)
            ).scalar_one()
        except IntegrityError:
            raise ConflictError(f"a league named {name!r} exists already") from None
        conn.execute(
            insert(league_entrants),
            [{"league_id": league_id, "position": i, "bot_version_id": v.id} for i, v in enumerate(versions)],
        )
        rows = [
            {
                "league_id": league_id,
                "number": number,
                "seed": deal_seed(deal_key, int(block_seed)),
                "entrants": list(members),
            }
            for number, block_seed, members in planned
        ]
        conn.execute(insert(blocks), rows)
    return int(league_id)


def add_blocks(engine: Engine, league_id: int, planned: Iterable[tuple[int, int, Sequence[int]]]) -> int:
    """Add planned blocks ``(number, seed, entrants)`` to a league; returns how many were new.

    Idempotent: a block whose number is stored already is skipped when it is the same block
    (two runners that planned the same deterministic round store it once), and refused with
    :class:`ConflictError` when it is another one. Seeds are plan seeds: each is stored as the
    deal seed the league's deal key gives it (:func:`workers.planning.deals.deal_seed`).
    """
    with engine.connect() as conn:
        found = conn.execute(select(leagues.c.deal_key).where(leagues.c.id == league_id)).first()
    if found is None:
        raise NotFoundError(f"no league with id {league_id}")
    deal_key = None if found.deal_key is None else bytes(found.deal_key)
    wanted = {
        number: (deal_seed(deal_key, int(seed)), [int(p) for p in members])
        for number, seed, members in planned
    }
    if not wanted:
        return 0
    for _ in range(3):  # another runner may insert the same round between our read and write
        try:
            with engine.begin() as conn:
                stored = {
                    r.number: (int(r.seed), list(r.entrants))
                    for r in conn.execute(
                        select(blocks.c.number, blocks.c.seed, blocks.c.entrants).where(
                            blocks.c.league_id == league_id, blocks.c.number.in_(list(wanted))
                        )
                    )
                }
                for number, block in stored.items():
                    if block != wanted[number]:
                        raise ConflictError(
                            f"block {number} of league {league_id} is stored already with other seats or seed"
                        )
                new = [
                    {"league_id": league_id, "number": n, "seed": seed, "entrants": members}
                    for n, (seed, members) in sorted(wanted.items())
                    if n not in stored
                ]
                if new:
                    conn.execute(insert(blocks), new)
                return len(new)
        except IntegrityError:
            continue
    raise ConflictError(
        f"could not add blocks to league {league_id}: other writers kept adding the same ones"
    )


def add_entrants(engine: Engine, league_id: int, entrants: Sequence[BotVersion | NewVersion]) -> list[int]:
    """Add entrants to a league that runs on (a ladder), in one transaction; returns their positions.

    New versions (bot files, reference bots) are stored in the same transaction. Refuses with
    :class:`ConflictError`, storing nothing, a finished or stopped league and a bot version that
    is in the league already.
    """
    with engine.begin() as conn:
        row = conn.execute(
            select(leagues.c.name, leagues.c.finished_at, leagues.c.stopping)
            .where(leagues.c.id == league_id)
            .with_for_update()
        ).first()
        if row is None:
            raise NotFoundError(f"no league with id {league_id}")
        if row.finished_at is not None or (row.stopping or {}).get("stopped"):
            raise ConflictError(f"league {row.name!r} is finished: it takes no new entrants")
        have = {
            int(r.bot_version_id): int(r.position)
            for r in conn.execute(
                select(league_entrants.c.bot_version_id, league_entrants.c.position).where(
                    league_entrants.c.league_id == league_id
                )
            )
        }
        position = max(have.values(), default=-1) + 1
        added = []
        for entrant in entrants:
            version = _add_version(conn, entrant)[0] if isinstance(entrant, NewVersion) else entrant
            if version.id in have:
                raise ConflictError(
                    f"{version.bot}@{version.version} is in league {row.name!r} already"
                    f" (entrant {have[version.id]}); submit a new version to enter it again"
                )
            conn.execute(
                insert(league_entrants).values(
                    league_id=league_id, position=position, bot_version_id=version.id
                )
            )
            have[version.id] = position
            added.append(position)
            position += 1
    return added


def set_stopping(engine: Engine, league_id: int, stopping: Mapping[str, Any]) -> None:
    """Replace a league's stopping rule (a ladder's settings: ``league stop`` sets ``stopped``)."""
    with engine.begin() as conn:
        conn.execute(update(leagues).where(leagues.c.id == league_id).values(stopping=dict(stopping)))


def find_league(engine: Engine, name: str) -> League:
    """A league by name, with its entrants in position order."""
    return _league_where(engine, leagues.c.name == name, f"no league {name!r}")


def _league_where(engine: Engine, where: Any, missing: str) -> League:
    with engine.connect() as conn:
        row = conn.execute(select(leagues).where(where)).first()
        if row is None:
            raise NotFoundError(missing)
        versions = conn.execute(
            select(bot_versions, bots.c.name)
            .join(league_entrants, league_entrants.c.bot_version_id == bot_versions.c.id)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(league_entrants.c.league_id == row.id)
            .order_by(league_entrants.c.position)
        ).all()
    return League(
        row.id,
        row.name,
        row.variant,
        dict(row.config),
        int(row.seed),
        row.format,
        row.table_size,
        row.deals,
        tuple(_version(v, v.name) for v in versions),
        bytes(row.seat_key),
        None if row.stopping is None else dict(row.stopping),
        bool(row.fresh_processes),
        None if row.deal_key is None else bytes(row.deal_key),
    )


def league_by_id(engine: Engine, league_id: int) -> League:
    """A league by id."""
    return _league_where(engine, leagues.c.id == league_id, f"no league with id {league_id}")


def list_leagues(engine: Engine) -> list[dict[str, Any]]:
    """Every league with its progress."""
    query = (
        select(
            leagues.c.name,
            leagues.c.variant,
            leagues.c.format,
            func.count(blocks.c.id).label("blocks"),
            func.sum(case((blocks.c.status == "done", 1), else_=0)).label("done"),
        )
        .join(blocks, blocks.c.league_id == leagues.c.id)
        .group_by(leagues.c.id, leagues.c.name, leagues.c.variant, leagues.c.format)
        .order_by(leagues.c.id)
    )
    with engine.connect() as conn:
        return [dict(r._mapping) | {"done": int(r.done or 0)} for r in conn.execute(query)]


def blocks_of(engine: Engine, league_id: int, status: Sequence[str] | None = None) -> list[BlockRow]:
    """The league's blocks in number order, optionally only those with a given status."""
    query = select(blocks).where(blocks.c.league_id == league_id).order_by(blocks.c.number)
    if status:
        query = query.where(blocks.c.status.in_(status))
    with engine.connect() as conn:
        return [_block(r) for r in conn.execute(query)]


def _block(row: Any) -> BlockRow:
    return BlockRow(
        row.id,
        row.league_id,
        row.number,
        int(row.seed),
        tuple(row.entrants),
        row.status,
        row.attempts,
        row.claimed_by,
        _aware(row.lease_until),
    )


def _aware(moment: dt.datetime | None) -> dt.datetime | None:
    """A stored time as UTC (SQLite hands them back naive)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=dt.UTC)


def get_block(engine: Engine, block_id: int) -> BlockRow:
    """A block by id."""
    with engine.connect() as conn:
        row = conn.execute(select(blocks).where(blocks.c.id == block_id)).first()
    if row is None:
        raise NotFoundError(f"no block {block_id}")
    return _block(row)


def claim_block(engine: Engine, block_id: int, worker: str, *, lease_s: float = 60.0) -> BlockRow | None:
    """Mark a block running for ``worker`` under a lease of ``lease_s``; ``None`` if it is done already.

    Raises :class:`LeaseHeldError` while another claim's lease is live: a block is never played
    by two live workers at once. A block whose lease expired (its worker died, or lost the store)
    is claimed again; the returned row's ``attempts`` is this claim's fencing number, which
    :func:`renew_lease`, :func:`record_block` and :func:`fail_block` check.
    """
    now = _now()
    with engine.begin() as conn:
        row = conn.execute(select(blocks).where(blocks.c.id == block_id).with_for_update()).first()
        if row is None:
            raise NotFoundError(f"no block {block_id}")
        if row.status == "done":
            return None
        lease = _aware(row.lease_until)
        if row.status == "running" and lease is not None and lease > now:
            raise LeaseHeldError(
                f"block {block_id} is being played by {row.claimed_by} (lease until {lease:%H:%M:%S})"
            )
        claimed = replace(
            _block(row),
            status="running",
            attempts=row.attempts + 1,
            claimed_by=worker,
            lease_until=now + dt.timedelta(seconds=lease_s),
        )
        conn.execute(
            update(blocks)
            .where(blocks.c.id == block_id)
            .values(
                status=claimed.status,
                claimed_by=claimed.claimed_by,
                claimed_at=now,
                lease_until=claimed.lease_until,
                attempts=claimed.attempts,
            )
        )
    # The row as this transaction left it (it held the row's lock: nobody else wrote it between).
    return claimed


def _is_claim(claim: tuple[str, int]) -> Any:
    worker, attempt = claim
    return (blocks.c.claimed_by == worker) & (blocks.c.attempts == attempt)


def renew_lease(engine: Engine, block_id: int, claim: tuple[str, int], *, lease_s: float) -> bool:
    """Extend the lease of ``claim`` (worker, attempt) by ``lease_s`` from now; ``False``: it is lost."""
    with engine.begin() as conn:
        done = conn.execute(
            update(blocks)
            .where(blocks.c.id == block_id, blocks.c.status == "running", _is_claim(claim))
            .values(lease_until=_now() + dt.timedelta(seconds=lease_s))
        )
    return done.rowcount == 1


def release_claims(
    engine: Engine, worker: str, *, league_id: int | None = None, block_ids: Sequence[int] | None = None
) -> list[int]:
    """Give back the running blocks ``worker`` claimed (pending, no lease); returns their ids.

    For a worker that stops before its blocks are played: any worker may claim them at once.
    """
    query = select(blocks.c.id).where(blocks.c.status == "running", blocks.c.claimed_by == worker)
    if league_id is not None:
        query = query.where(blocks.c.league_id == league_id)
    if block_ids is not None:
        query = query.where(blocks.c.id.in_(list(block_ids)))
    with engine.begin() as conn:
        ids = [int(i) for i in conn.execute(query.with_for_update()).scalars()]
        if ids:
            conn.execute(
                update(blocks)
                .where(blocks.c.id.in_(ids))
                .values(status="pending", claimed_by=None, lease_until=None, queued_at=None)
            )
    return ids


def fail_block(engine: Engine, block_id: int, error: str, *, claim: tuple[str, int] | None = None) -> None:
    """Record why a block could not be played (it stays claimable for a retry).

    With ``claim``, only while that claim holds: a worker that lost its lease leaves alone the
    block that another worker is playing now.
    """
    query = update(blocks).where(blocks.c.id == block_id, blocks.c.status != "done")
    if claim is not None:
        query = query.where(_is_claim(claim))
    with engine.begin() as conn:
        conn.execute(query.values(status="failed", error=error[:4000], lease_until=None))


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat of a played match, ready to store."""

    seat: int
    position: int
    bot_version_id: int
    score: int
    rank: int
    faults: Mapping[str, int]
    defaulted: int
    forfeited: bool
    think_ms: int
    fault_detail: str | None = None
    """JSON: the faults' reasons and the process's exit (see :mod:`workers.play.faults`); None: no faults."""


@dataclass(frozen=True, slots=True)
class MatchRecordRow:
    """One played match of a block, ready to store."""

    rotation: int
    seed: int
    digest: str
    termination: str
    seats: Sequence[SeatRecord]
    transcript: Mapping[str, Any]


def record_block(
    engine: Engine,
    block_id: int,
    played: Sequence[MatchRecordRow],
    *,
    claim: tuple[str, int] | None = None,
) -> bool:
    """Store a block's results in one transaction; ``False`` (nothing written) if already stored.

    With ``claim`` (worker, attempt), also ``False`` when another claim took the block over after
    this one's lease expired: that worker plays it and stores it.
    """
    try:
        with engine.begin() as conn:
            row = conn.execute(
                select(blocks.c.status, blocks.c.claimed_by, blocks.c.attempts)
                .where(blocks.c.id == block_id)
                .with_for_update()
            ).first()
            if row is None:
                raise NotFoundError(f"no block {block_id}")
            if row.status == "done":
                return False
            if claim is not None and row.status == "running" and (row.claimed_by, row.attempts) != claim:
                return False
            if played:
                # Three statements for the whole block, not three a match: each match's id comes
                # back in the order of its row (insertmanyvalues, on SQLite and PostgreSQL alike).
                match_ids = (
                    conn.execute(
                        insert(matches).returning(matches.c.id, sort_by_parameter_order=True),
                        [
                            {
                                "block_id": block_id,
                                "rotation": match.rotation,
                                "seed": match.seed,
                                "digest": match.digest,
                                "termination": match.termination,
                            }
                            for match in played
                        ],
                    )
                    .scalars()
                    .all()
                )
                stored = list(zip(match_ids, played, strict=True))
                conn.execute(
                    insert(seat_results), [_seat_row(mid, s) for mid, match in stored for s in match.seats]
                )
                conn.execute(
                    insert(transcripts),
                    [
                        {"match_id": mid, "body": json.dumps(match.transcript, sort_keys=True)}
                        for mid, match in stored
                    ],
                )
            conn.execute(
                update(blocks)
                .where(blocks.c.id == block_id)
                .values(status="done", finished_at=_now(), error=None, lease_until=None)
            )
    except IntegrityError:
        # Another delivery of the same block won the race: its results stand. Anything else
        # (results that contradict themselves) is an error the caller must see.
        if get_block(engine, block_id).status == "done":
            return False
        raise
    return True


def _seat_row(match_id: int, seat: SeatRecord) -> dict[str, Any]:
    row: dict[str, Any] = {
        "match_id": match_id,
        "seat": seat.seat,
        "position": seat.position,
        "bot_version_id": seat.bot_version_id,
        "score": seat.score,
        "rank": seat.rank,
        "defaulted": seat.defaulted,
        "forfeited": seat.forfeited,
        "think_ms": seat.think_ms,
    }
    for kind, column in FAULT_COLUMNS.items():
        row[column] = int(seat.faults.get(kind, 0))
    row["fault_detail"] = seat.fault_detail
    return row


def fault_details(engine: Engine, league_id: int) -> list[tuple[int, str]]:
    """(bot version id, fault_detail JSON) of every seat of the league that has faults."""
    query = (
        select(seat_results.c.bot_version_id, seat_results.c.fault_detail)
        .join(matches, matches.c.id == seat_results.c.match_id)
        .join(blocks, blocks.c.id == matches.c.block_id)
        .where(blocks.c.league_id == league_id, seat_results.c.fault_detail.is_not(None))
        .order_by(seat_results.c.match_id, seat_results.c.seat)
    )
    with engine.connect() as conn:
        return [(int(r.bot_version_id), str(r.fault_detail)) for r in conn.execute(query)]


def league_results(engine: Engine, league_id: int) -> list[dict[str, Any]]:
    """Every seat result of the league in match order (block number, rotation, seat)."""
    faults = sum(seat_results.c[c] for c in FAULT_COLUMNS.values())
    query = (
        select(
            blocks.c.number.label("block"),
            matches.c.rotation,
            matches.c.id.label("match_id"),
            seat_results.c.seat,
            seat_results.c.position,
            seat_results.c.score,
            seat_results.c.rank,
            faults.label("faults"),
        )
        .join(matches, matches.c.block_id == blocks.c.id)
        .join(seat_results, seat_results.c.match_id == matches.c.id)
        .where(blocks.c.league_id == league_id)
        .order_by(blocks.c.number, matches.c.rotation, seat_results.c.seat)
    )
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def block_counts(engine: Engine, league_id: int) -> dict[str, int]:
    """The league's blocks by status."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(blocks.c.status, func.count())
            .where(blocks.c.league_id == league_id)
            .group_by(blocks.c.status)
        ).all()
    return {status: int(count) for status, count in rows}


def league_counts(engine: Engine, league_id: int) -> dict[str, Any]:
    """Blocks by status, matches stored, and faults by kind."""
    by_status = block_counts(engine, league_id)
    with engine.connect() as conn:
        played = conn.execute(
            select(func.count(matches.c.id))
            .join(blocks, blocks.c.id == matches.c.block_id)
            .where(blocks.c.league_id == league_id)
        ).scalar()
        fault_row = conn.execute(
            select(*[func.coalesce(func.sum(seat_results.c[c]), 0) for c in FAULT_COLUMNS.values()])
            .join(matches, matches.c.id == seat_results.c.match_id)
            .join(blocks, blocks.c.id == matches.c.block_id)
            .where(blocks.c.league_id == league_id)
        ).one()
        errors = conn.execute(
            select(blocks.c.number, blocks.c.error)
            .where(blocks.c.league_id == league_id, blocks.c.status == "failed")
            .order_by(blocks.c.number)
        ).all()
    return {
        "blocks": by_status,
        "matches": int(played or 0),
        "faults": {kind: int(v) for kind, v in zip(FAULT_COLUMNS, fault_row, strict=True)},
        "errors": [{"block": n, "error": e} for n, e in errors],
    }


def store_ratings(engine: Engine, league_id: int, rows: Sequence[Mapping[str, Any]]) -> None:
    """Replace the league's ratings (one transaction)."""
    with engine.begin() as conn:
        conn.execute(ratings.delete().where(ratings.c.league_id == league_id))
        if rows:
            conn.execute(insert(ratings), [{"league_id": league_id, **row} for row in rows])


def load_ratings(engine: Engine, league_id: int) -> list[dict[str, Any]]:
    """The league's stored ratings by position."""
    with engine.connect() as conn:
        return [
            dict(r._mapping)
            for r in conn.execute(
                select(ratings).where(ratings.c.league_id == league_id).order_by(ratings.c.position)
            )
        ]


def transcript(engine: Engine, match_id: int) -> dict[str, Any]:
    """A stored match transcript."""
    with engine.connect() as conn:
        body = conn.execute(select(transcripts.c.body).where(transcripts.c.match_id == match_id)).scalar()
    if body is None:
        raise NotFoundError(f"no transcript for match {match_id}")
    return dict(json.loads(body))


# -- leagues handed to the workers: leases, reconciliation, heartbeats ----------------------------


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


def start_league(engine: Engine, league_id: int) -> None:
    """Hand a league to the workers: their reconciliation keeps it going until it is finished."""
    with engine.begin() as conn:
        conn.execute(
            update(leagues)
            .where(leagues.c.id == league_id)
            .values(started_at=func.coalesce(leagues.c.started_at, _now()), finished_at=None)
        )


def open_leagues(engine: Engine) -> list[int]:
    """Ids of the leagues handed to the workers and not finished."""
    with engine.connect() as conn:
        return [
            int(i)
            for i in conn.execute(
                select(leagues.c.id)
                .where(leagues.c.started_at.is_not(None), leagues.c.finished_at.is_(None))
                .order_by(leagues.c.id)
            ).scalars()
        ]


def finish_league(engine: Engine, league_id: int) -> bool:
    """Mark a league finished if every block is stored; returns whether it is."""
    with engine.begin() as conn:
        left = conn.execute(
            select(func.count()).where(blocks.c.league_id == league_id, blocks.c.status != "done")
        ).scalar()
        if left:
            return False
        conn.execute(
            update(leagues)
            .where(leagues.c.id == league_id, leagues.c.finished_at.is_(None))
            .values(finished_at=_now())
        )
    return True


def expire_leases(engine: Engine, league_id: int) -> list[BlockRow]:
    """Give back the league's running blocks whose lease is over (pending again); returns them as
    they were (with the dead claim)."""
    now = _now()
    with engine.begin() as conn:
        rows = [
            _block(r)
            for r in conn.execute(
                select(blocks)
                .where(
                    blocks.c.league_id == league_id,
                    blocks.c.status == "running",
                    (blocks.c.lease_until < now) | blocks.c.lease_until.is_(None),
                )
                .with_for_update()
            )
        ]
        if rows:
            conn.execute(
                update(blocks)
                .where(blocks.c.id.in_([r.id for r in rows]))
                .values(status="pending", claimed_by=None, lease_until=None)
            )
    return rows


def pending_blocks_beside(engine: Engine, block_id: int, limit: int) -> list[BlockRow]:
    """Up to ``limit`` pending blocks of ``block_id``'s league other than it, the last first (what a
    worker may play in one set with it: ``workers.play.execute.play_with_pending``). Blocks are sent in
    number order, so the last ones' messages come last: taken from the end, a block played beside
    another is seldom one whose message a worker is about to take."""
    with engine.connect() as conn:
        league_id = conn.execute(select(blocks.c.league_id).where(blocks.c.id == block_id)).scalar()
        if league_id is None:
            return []
        rows = conn.execute(
            select(blocks)
            .where(blocks.c.league_id == league_id, blocks.c.status == "pending", blocks.c.id != block_id)
            .order_by(blocks.c.number.desc())
            .limit(limit)
        )
        return [_block(r) for r in rows]


def claimable_blocks(engine: Engine, league_id: int) -> list[BlockRow]:
    """The league's blocks that wait for a worker: pending or failed."""
    return blocks_of(engine, league_id, ["pending", "failed"])


def mark_queued(engine: Engine, block_id: int, *, not_since: dt.datetime) -> bool:
    """Note that a message for the block is being sent, unless one was sent at ``not_since`` or later.

    A compare-and-set: of several reconcilers looking at the same block, one wins and sends.
    """
    with engine.begin() as conn:
        done = conn.execute(
            update(blocks)
            .where(
                blocks.c.id == block_id,
                blocks.c.status != "done",
                blocks.c.queued_at.is_(None) | (blocks.c.queued_at < not_since),
            )
            .values(queued_at=_now())
        )
    return done.rowcount == 1


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


def last_progress(engine: Engine, league_id: int) -> dt.datetime | None:
    """When the league last stored a block, or was started if it stored none since."""
    with engine.connect() as conn:
        last = select(func.max(blocks.c.finished_at)).where(blocks.c.league_id == league_id)
        stored = _aware(conn.execute(last).scalar())
        started = _aware(conn.execute(select(leagues.c.started_at).where(leagues.c.id == league_id)).scalar())
    return max((m for m in (stored, started) if m is not None), default=None)


def league_phase(engine: Engine, league_id: int) -> str:
    """``created`` (not handed to the workers), ``started`` or ``finished``."""
    with engine.connect() as conn:
        row = conn.execute(
            select(leagues.c.started_at, leagues.c.finished_at).where(leagues.c.id == league_id)
        ).first()
    if row is None:
        raise NotFoundError(f"no league with id {league_id}")
    return "finished" if row.finished_at else "started" if row.started_at else "created"


def played_seeds(engine: Engine, league_id: int) -> list[tuple[int, int, list[int]]]:
    """Each block of a league as ``(number, its deal seed, the seeds its stored matches played)``."""
    query = (
        select(blocks.c.number, blocks.c.seed, matches.c.seed.label("played"))
        .outerjoin(matches, matches.c.block_id == blocks.c.id)
        .where(blocks.c.league_id == league_id)
        .order_by(blocks.c.number)
    )
    rows: dict[int, tuple[int, list[int]]] = {}
    with engine.connect() as conn:
        for row in conn.execute(query):
            _, played = rows.setdefault(int(row.number), (int(row.seed), []))
            if row.played is not None:
                played.append(int(row.played))
    return [(number, seed, played) for number, (seed, played) in rows.items()]
