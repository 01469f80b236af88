"""Leagues: their definition, entrants and planned blocks, and their phase (created, handed to the
workers, finished)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Engine,
    Integer,
    bindparam,
    case,
    func,
    insert,
    literal_column,
    null,
    select,
    union_all,
    update,
)
from sqlalchemy.exc import IntegrityError

from workers.planning.deals import deal_seed
from workers.store.engine import reading
from workers.store.repo.blocks import WAITING
from workers.store.repo.common import (
    BotVersion,
    ConflictError,
    NewVersion,
    NotFoundError,
    _add_version,
    _aware,
    _now,
    check_name,
    refuse_retired,
)
from workers.store.schema import (
    blocks,
    bot_versions,
    bots,
    league_entrants,
    leagues,
    matches,
    ratings,
    seat_results,
    transcripts,
)


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
        refuse_retired(conn, versions)
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
            refuse_retired(conn, [version])
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
    return _league_where(engine, _LEAGUE_BY_NAME, name, f"no league {name!r}")


_LEAGUE_COLUMNS = (
    leagues.c.id,
    leagues.c.name,
    leagues.c.variant,
    leagues.c.config,
    leagues.c.seed,
    leagues.c.format,
    leagues.c.table_size,
    leagues.c.deals,
    leagues.c.seat_key,
    leagues.c.stopping,
    leagues.c.fresh_processes,
    leagues.c.deal_key,
)
_ENTRANT_COLUMNS = (
    bot_versions.c.id,
    bots.c.name,
    bot_versions.c.version,
    bot_versions.c.sha256,
    bot_versions.c.entry_point,
    bot_versions.c.variant,
    bot_versions.c.retired_at,
)


def _league_and_entrants(key: Any) -> Any:
    """The league whose id or name is ``key`` and its entrants in one statement, built once: a
    row with the league's columns (place -1), then one per entrant with its version's (place its
    position), each row's other columns null. A worker reads its block's league for every block:
    two statements were two round trips (docs/capacity.md, fix 9)."""
    league_id = select(leagues.c.id).where(key).scalar_subquery()
    head = select(
        literal_column("-1", Integer).label("place"),
        *_LEAGUE_COLUMNS,
        *(null().cast(c.type).label(f"v_{c.name}") for c in _ENTRANT_COLUMNS),
    ).where(key)
    rest = (
        select(
            league_entrants.c.position,
            *(null().cast(c.type) for c in _LEAGUE_COLUMNS),
            *(c.label(f"v_{c.name}") for c in _ENTRANT_COLUMNS),
        )
        .select_from(league_entrants)
        .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(league_entrants.c.league_id == league_id)
    )
    union = union_all(head, rest).subquery()
    return select(union).order_by(union.c.place)


_LEAGUE_BY_ID = _league_and_entrants(leagues.c.id == bindparam("key"))
_LEAGUE_BY_NAME = _league_and_entrants(leagues.c.name == bindparam("key"))
_LEAGUE_WIDTH = len(_LEAGUE_COLUMNS)


def _league_where(engine: Engine, query: Any, key: Any, missing: str) -> League:
    with reading(engine) as conn:
        rows = conn.execute(query, {"key": key}).all()
    if not rows or rows[0][0] != -1:
        raise NotFoundError(missing)
    (league_id, name, variant, config, seed, form, table_size, deals, seat_key, stopping, fresh, deal_key) = (
        rows[0][1 : 1 + _LEAGUE_WIDTH]
    )
    return League(
        league_id,
        name,
        variant,
        dict(config),
        int(seed),
        form,
        table_size,
        deals,
        tuple(
            BotVersion(v_id, v_name, version, sha256, entry_point, v_variant, retired is not None)
            for v_id, v_name, version, sha256, entry_point, v_variant, retired in (
                row[1 + _LEAGUE_WIDTH :] for row in rows[1:]
            )
        ),
        bytes(seat_key),
        None if stopping is None else dict(stopping),
        bool(fresh),
        None if deal_key is None else bytes(deal_key),
    )


def league_by_id(engine: Engine, league_id: int) -> League:
    """A league by id."""
    return _league_where(engine, _LEAGUE_BY_ID, league_id, f"no league with id {league_id}")


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


def reopen_league(engine: Engine, league_id: int, *, stopping: Mapping[str, Any], deals: int) -> None:
    """Give a league that adds deals as it goes a new rule (a larger budget) and mark it unfinished,
    so its runners add rounds again (an SPRT test extended by ``bot test``)."""
    with engine.begin() as conn:
        conn.execute(
            update(leagues)
            .where(leagues.c.id == league_id)
            .values(stopping=dict(stopping), deals=deals, finished_at=None)
        )


def last_progress(engine: Engine, league_id: int) -> dt.datetime | None:
    """When the league last stored a block, or was started if it stored none since."""
    with engine.connect() as conn:
        last = select(func.max(blocks.c.finished_at)).where(blocks.c.league_id == league_id)
        stored = _aware(conn.execute(last).scalar())
        started = _aware(conn.execute(select(leagues.c.started_at).where(leagues.c.id == league_id)).scalar())
    return max((m for m in (stored, started) if m is not None), default=None)


def league_phase(engine: Engine, league_id: int) -> str:
    """``created`` (not handed to the workers), ``started`` or ``finished``."""
    with reading(engine) as conn:
        row = conn.execute(
            select(leagues.c.started_at, leagues.c.finished_at).where(leagues.c.id == league_id)
        ).first()
    if row is None:
        raise NotFoundError(f"no league with id {league_id}")
    return _phase(row)


def _phase(row: Any) -> str:
    return "finished" if row.finished_at else "started" if row.started_at else "created"


_BLOCK_LEAGUE = (
    select(blocks.c.league_id, leagues.c.started_at, leagues.c.finished_at)
    .join(leagues, leagues.c.id == blocks.c.league_id)
    .where(blocks.c.id == bindparam("block_id"))
)


def block_league(engine: Engine, block_id: int) -> tuple[int, str] | None:
    """The league of a block and that league's phase (:func:`league_phase`), in one statement;
    ``None``: no such block. What a worker checks of each message (workers.queue.messages)."""
    with reading(engine) as conn:
        row = conn.execute(_BLOCK_LEAGUE, {"block_id": block_id}).first()
    return None if row is None else (int(row.league_id), _phase(row))


_LEAGUE_PROGRESS = select(
    leagues.c.started_at,
    leagues.c.finished_at,
    select(blocks.c.id)
    .where(
        blocks.c.league_id == bindparam("league_id"),
        blocks.c.status.in_(WAITING),
        blocks.c.queued_at.is_not(None),
    )
    .limit(1)
    .exists()
    .label("sent_left"),
).where(leagues.c.id == bindparam("league_id"))


def league_progress(engine: Engine, league_id: int) -> tuple[str, bool]:
    """The league's phase (:func:`league_phase`) and whether any of its blocks handed to the
    broker is still to be stored (``blocks_left(..., sent_only=True)``), in one statement: what
    a worker asks after each block it stores (workers.queue.reconcile.advance)."""
    with reading(engine) as conn:
        row = conn.execute(_LEAGUE_PROGRESS, {"league_id": league_id}).first()
    if row is None:
        raise NotFoundError(f"no league with id {league_id}")
    return _phase(row), bool(row.sent_left)


@dataclass(frozen=True, slots=True)
class Deleted:
    """What :func:`delete_league` removed, by kind: rows of the store."""

    league: str
    entrants: int
    blocks: int
    matches: int
    seat_results: int
    transcripts: int
    ratings: int


def delete_league(engine: Engine, name: str) -> Deleted:
    """Remove a league and everything stored for it (its entrants' places, blocks, matches, seat
    results, transcripts and table) in one transaction; the bot versions stay.

    Refused (:class:`ConflictError`) while one of its blocks is being played (running under a live
    lease): its worker would store into a league that is gone. The league's rows are locked
    first, so no worker claims a block of it meanwhile; a message a worker takes later for one of
    its blocks finds no block and plays nothing.
    """
    now = _now()
    with engine.begin() as conn:
        row = conn.execute(select(leagues).where(leagues.c.name == name).with_for_update()).first()
        if row is None:
            raise NotFoundError(f"no league {name!r} in the store")
        league_id = row.id
        rows = conn.execute(
            select(blocks.c.id, blocks.c.number, blocks.c.status, blocks.c.claimed_by, blocks.c.lease_until)
            .where(blocks.c.league_id == league_id)
            .order_by(blocks.c.number)
            .with_for_update()
        ).all()
        playing = [
            r
            for r in rows
            if r.status == "running" and r.lease_until is not None and (_aware(r.lease_until) or now) > now
        ]
        if playing:
            first = playing[0]
            raise ConflictError(
                f"league {name!r} is being played: block {first.number} by {first.claimed_by}"
                + (f" and {len(playing) - 1} more" if len(playing) > 1 else "")
                + " (stop its 'league run' or workers, or wait for its lease to run out, then delete it)"
            )
        block_ids = [r.id for r in rows]
        match_ids = select(matches.c.id).where(matches.c.block_id.in_(block_ids))

        def gone(result: Any) -> int:
            return int(result.rowcount or 0)

        removed_transcripts = gone(
            conn.execute(transcripts.delete().where(transcripts.c.match_id.in_(match_ids)))
        )
        removed_seats = gone(
            conn.execute(seat_results.delete().where(seat_results.c.match_id.in_(match_ids)))
        )
        removed_matches = gone(conn.execute(matches.delete().where(matches.c.block_id.in_(block_ids))))
        removed_blocks = gone(conn.execute(blocks.delete().where(blocks.c.league_id == league_id)))
        removed_ratings = gone(conn.execute(ratings.delete().where(ratings.c.league_id == league_id)))
        removed_entrants = gone(
            conn.execute(league_entrants.delete().where(league_entrants.c.league_id == league_id))
        )
        conn.execute(leagues.delete().where(leagues.c.id == league_id))
    return Deleted(
        league=name,
        entrants=removed_entrants,
        blocks=removed_blocks,
        matches=removed_matches,
        seat_results=removed_seats,
        transcripts=removed_transcripts,
        ratings=removed_ratings,
    )
