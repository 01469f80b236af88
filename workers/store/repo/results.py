"""Results: a block's matches, seat results and transcripts (stored whole), what a league's results
add up to, and its ratings."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from workers.store.engine import one_statement
from workers.store.repo.blocks import _is_claim, get_block
from workers.store.repo.common import NotFoundError, _now
from workers.store.schema import FAULT_COLUMNS, blocks, matches, ratings, seat_results, transcripts


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
    if engine.dialect.name == "postgresql":
        return _record_in_one_statement(engine, block_id, played, claim)
    done = (
        update(blocks)
        .where(blocks.c.id == block_id, blocks.c.status != "done")
        .values(status="done", finished_at=_now(), error=None, lease_until=None)
        .returning(blocks.c.id)
    )
    if claim is not None:
        # Another claim that took the block over (after this one's lease expired) plays it.
        done = done.where((blocks.c.status != "running") | _is_claim(claim))
    try:
        with engine.begin() as conn:
            # The block marked stored first, its row locked until the results below commit with
            # it: one statement for the checks a SELECT ... FOR UPDATE made before.
            if conn.execute(done).first() is None:
                if conn.execute(select(blocks.c.id).where(blocks.c.id == block_id)).first() is None:
                    raise NotFoundError(f"no block {block_id}")
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
    except IntegrityError:
        # Another delivery of the same block won the race: its results stand. Anything else
        # (results that contradict themselves) is an error the caller must see.
        if get_block(engine, block_id).status == "done":
            return False
        raise
    return True


_SEAT_COLUMNS = (
    ("seat", "int"),
    ("position", "int"),
    ("bot_version_id", "int"),
    ("score", "int"),
    ("rank", "int"),
    ("defaulted", "int"),
    ("forfeited", "boolean"),
    ("think_ms", "int"),
    *((column, "int") for column in FAULT_COLUMNS.values()),
    ("fault_detail", "text"),
)
"""A seat result's columns but its match's id, with their PostgreSQL types (the arrays' elements)."""


def _unnest(prefix: str, columns: Sequence[tuple[str, str]]) -> str:
    """Rows from one array parameter per column, numbered in their order (``n``)."""
    arrays = ", ".join(f"%({prefix}{name})s::{kind}[]" for name, kind in columns)
    names = ", ".join(name for name, _ in columns)
    return f"unnest({arrays}) WITH ORDINALITY AS {prefix}({names}, n)"


_MATCH_COLUMNS = (("rotation", "int"), ("seed", "bigint"), ("digest", "text"), ("termination", "text"))

_RECORD_SQL = f"""
WITH done AS (
    UPDATE blocks SET status = 'done', finished_at = %(now)s, error = NULL, lease_until = NULL
    WHERE id = %(block)s AND status <> 'done'
      AND (%(any_claim)s OR status <> 'running' OR (claimed_by = %(worker)s AND attempts = %(attempt)s))
    RETURNING id
), m AS (
    INSERT INTO matches (block_id, rotation, seed, digest, termination)
    SELECT done.id, m_.rotation, m_.seed, m_.digest, m_.termination
    FROM done, {_unnest("m_", _MATCH_COLUMNS)}
    ORDER BY m_.n
    RETURNING id, rotation
), s AS (
    INSERT INTO seat_results (match_id, {", ".join(name for name, _ in _SEAT_COLUMNS)})
    SELECT m.id, {", ".join("s_." + name for name, _ in _SEAT_COLUMNS)}
    FROM m JOIN {_unnest("s_", [("rotation", "int"), *_SEAT_COLUMNS])} ON s_.rotation = m.rotation
), t AS (
    INSERT INTO transcripts (match_id, body)
    SELECT m.id, t_.body FROM m JOIN {_unnest("t_", [("rotation", "int"), ("body", "text")])}
      ON t_.rotation = m.rotation
)
SELECT count(*) FROM done
"""
"""A block's results on PostgreSQL in one statement: the block marked stored under the same checks
as :func:`record_block`'s ``UPDATE`` (not stored yet; the claim, if any, still the block's), and
its matches, seat results and transcripts inserted only if it was (data-modifying ``WITH``
queries, one snapshot, all or nothing). The matches take their ids in the order they are given
(``ORDER BY`` their place), as the inserts of several rows did. The rows are passed as arrays, one
per column, so the text is the same for every block and psycopg prepares it once per connection."""


def record_params(
    block_id: int, played: Sequence[MatchRecordRow], claim: tuple[str, int] | None
) -> dict[str, Any]:
    """:data:`_RECORD_SQL`'s parameters for a block's results: the checks' values, and one list
    per column of the matches, the seat results and the transcripts."""
    rows = [(match, seat) for match in played for seat in match.seats]
    seat_rows = [_seat_row(0, seat) for _, seat in rows]
    return {
        "now": _now(),
        "block": block_id,
        "any_claim": claim is None,
        "worker": claim[0] if claim is not None else "",
        "attempt": claim[1] if claim is not None else 0,
        "m_rotation": [m.rotation for m in played],
        "m_seed": [m.seed for m in played],
        "m_digest": [m.digest for m in played],
        "m_termination": [m.termination for m in played],
        "s_rotation": [match.rotation for match, _ in rows],
        **{f"s_{name}": [row[name] for row in seat_rows] for name, _ in _SEAT_COLUMNS},
        "t_rotation": [m.rotation for m in played],
        "t_body": [json.dumps(m.transcript, sort_keys=True) for m in played],
    }


def _record_in_one_statement(
    engine: Engine, block_id: int, played: Sequence[MatchRecordRow], claim: tuple[str, int] | None
) -> bool:
    """:func:`record_block` on PostgreSQL: one statement, one round trip, no ``BEGIN`` and
    ``COMMIT`` (a statement alone is atomic). Six round trips before (docs/capacity.md)."""
    params = record_params(block_id, played, claim)
    try:
        with one_statement(engine) as conn:
            stored = int(conn.exec_driver_sql(_RECORD_SQL, params).scalar_one())
            missing = not stored and conn.execute(select(blocks.c.id).where(blocks.c.id == block_id)).first()
            if missing is None:
                raise NotFoundError(f"no block {block_id}")
    except IntegrityError:
        # As record_block: another delivery of the same block won the race, its results stand.
        if get_block(engine, block_id).status == "done":
            return False
        raise
    return stored == 1


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
