"""Blocks: reads, claims and their leases (fenced by the attempt), failures, queue marks."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine, bindparam, or_, select, update

from workers.store.engine import one_statement, reading
from workers.store.repo.common import LeaseHeldError, NotFoundError, _aware, _now
from workers.store.schema import blocks


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


BLOCK_COLUMNS = (
    blocks.c.id,
    blocks.c.league_id,
    blocks.c.number,
    blocks.c.seed,
    blocks.c.entrants,
    blocks.c.status,
    blocks.c.attempts,
    blocks.c.claimed_by,
    blocks.c.lease_until,
)
"""A :class:`BlockRow`'s columns in its fields' order: what :func:`_block` reads by position."""


def blocks_of(engine: Engine, league_id: int, status: Sequence[str] | None = None) -> list[BlockRow]:
    """The league's blocks in number order, optionally only those with a given status."""
    query = select(*BLOCK_COLUMNS).where(blocks.c.league_id == league_id).order_by(blocks.c.number)
    if status:
        query = query.where(blocks.c.status.in_(status))
    with reading(engine) as conn:
        return [_block(r) for r in conn.execute(query).all()]


def _block(row: Any) -> BlockRow:
    """A row of :data:`BLOCK_COLUMNS` as a :class:`BlockRow` (by position: a worker reads about
    140 a block, ``repo.pending_blocks_beside``'s among them)."""
    id_, league_id, number, seed, entrants, status, attempts, claimed_by, lease_until = row
    return BlockRow(
        id_, league_id, number, int(seed), tuple(entrants), status, attempts, claimed_by, _aware(lease_until)
    )


_GET_BLOCK = select(*BLOCK_COLUMNS).where(blocks.c.id == bindparam("block_id"))


def get_block(engine: Engine, block_id: int) -> BlockRow:
    """A block by id."""
    with reading(engine) as conn:
        row = conn.execute(_GET_BLOCK, {"block_id": block_id}).first()
    if row is None:
        raise NotFoundError(f"no block {block_id}")
    return _block(row)


# The statements a worker makes for every block are built once, here, with their values bound at
# each call: building a statement (its clauses, their coercions and its cache key) took about as
# much of a worker's CPU as executing it (docs/capacity.md, fix 9).
_CLAIM = (
    update(blocks)
    .where(
        blocks.c.id == bindparam("block_id"),
        blocks.c.status != "done",
        ~(
            (blocks.c.status == "running")
            & blocks.c.lease_until.is_not(None)
            & (blocks.c.lease_until > bindparam("now"))
        ),
    )
    .values(
        status="running",
        claimed_by=bindparam("worker"),
        claimed_at=bindparam("now"),
        lease_until=bindparam("until"),
        attempts=blocks.c.attempts + 1,
    )
    .returning(*BLOCK_COLUMNS)
)


def claim_block(engine: Engine, block_id: int, worker: str, *, lease_s: float = 60.0) -> BlockRow | None:
    """Mark a block running for ``worker`` under a lease of ``lease_s``; ``None`` if it is done already.

    Raises :class:`LeaseHeldError` while another claim's lease is live: a block is never played
    by two live workers at once. A block whose lease expired (its worker died, or lost the store)
    is claimed again; the returned row's ``attempts`` is this claim's fencing number, which
    :func:`renew_lease`, :func:`record_block` and :func:`fail_block` check.
    """
    now = _now()
    lease_until = now + dt.timedelta(seconds=lease_s)
    # The usual case in one statement: a block nobody holds is claimed (compare-and-set on the row,
    # which PostgreSQL re-checks under the row's lock when another claim wrote it meanwhile).
    with one_statement(engine) as conn:
        row = conn.execute(
            _CLAIM, {"block_id": block_id, "now": now, "worker": worker, "until": lease_until}
        ).first()
    if row is not None:
        return _block(row)
    # Not claimable: say why under the row's lock (or claim it, if its lease ran out since).
    with engine.begin() as conn:
        row = conn.execute(select(*BLOCK_COLUMNS).where(blocks.c.id == block_id).with_for_update()).first()
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
            lease_until=lease_until,
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


_RENEW = (
    update(blocks)
    .where(
        blocks.c.id == bindparam("block_id"),
        blocks.c.status == "running",
        blocks.c.claimed_by == bindparam("worker"),
        blocks.c.attempts == bindparam("attempt"),
    )
    .values(lease_until=bindparam("until"))
)


def renew_lease(engine: Engine, block_id: int, claim: tuple[str, int], *, lease_s: float) -> bool:
    """Extend the lease of ``claim`` (worker, attempt) by ``lease_s`` from now; ``False``: it is lost."""
    worker, attempt = claim
    until = _now() + dt.timedelta(seconds=lease_s)
    with one_statement(engine) as conn:
        done = conn.execute(
            _RENEW, {"block_id": block_id, "worker": worker, "attempt": attempt, "until": until}
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


def expire_leases(engine: Engine, league_id: int) -> list[BlockRow]:
    """Give back the league's running blocks whose lease is over (pending again); returns them as
    they were (with the dead claim)."""
    now = _now()
    with engine.begin() as conn:
        rows = [
            _block(r)
            for r in conn.execute(
                select(*BLOCK_COLUMNS)
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
    another is seldom one whose message a worker is about to take. One statement: the block's
    league comes from a subquery."""
    with reading(engine) as conn:
        # .all(): the driver makes the rows in one call, not one call a row.
        return [_block(r) for r in conn.execute(_BESIDE, {"block_id": block_id, "limit": limit}).all()]


_BESIDE = (
    select(*BLOCK_COLUMNS)
    .where(
        blocks.c.league_id
        == select(blocks.c.league_id).where(blocks.c.id == bindparam("block_id")).scalar_subquery(),
        blocks.c.status == "pending",
        blocks.c.id != bindparam("block_id"),
    )
    .order_by(blocks.c.number.desc())
    .limit(bindparam("limit"))
)


WAITING = ("pending", "running", "failed")
"""Every status but ``done``: a block that is still to be stored."""


def blocks_left(engine: Engine, league_id: int, *, sent_only: bool = False) -> bool:
    """Whether any block of the league is still to be stored (one indexed probe that reads no row
    beyond the first); ``sent_only``: any such block that was handed to the broker (``queued_at``)."""
    query = select(blocks.c.id).where(blocks.c.league_id == league_id, blocks.c.status.in_(WAITING))
    if sent_only:
        query = query.where(blocks.c.queued_at.is_not(None))
    with reading(engine) as conn:
        found = conn.execute(query.limit(1)).first()
    return found is not None


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


def mark_waiting_queued(
    engine: Engine,
    league_id: int,
    not_since: Mapping[str, dt.datetime],
    *,
    skip: Sequence[int] = (),
) -> tuple[list[int], dt.datetime]:
    """:func:`mark_queued` for every block of the league whose status is a key of ``not_since`` and
    whose last message was sent before that status's moment (or never), but ``skip``, in one
    statement; returns their ids in number order and the time written. The same compare-and-set,
    row by row: of several reconcilers, one wins each block. (One transaction a waiting block made
    a reconciliation pass over a store of 100,000 blocks take seconds: docs/capacity.md.)"""
    now = _now()
    due = [
        (blocks.c.status == status) & (blocks.c.queued_at.is_(None) | (blocks.c.queued_at < moment))
        for status, moment in not_since.items()
    ]
    if not due:
        return [], now
    query = (
        update(blocks)
        .where(blocks.c.league_id == league_id, or_(*due))
        .values(queued_at=now)
        .returning(blocks.c.id, blocks.c.number)
    )
    if skip:
        query = query.where(blocks.c.id.not_in(list(skip)))
    with engine.begin() as conn:
        rows = conn.execute(query).all()
    return [int(r.id) for r in sorted(rows, key=lambda r: r.number)], now


def unmark_queued(engine: Engine, block_ids: Sequence[int], at: dt.datetime) -> None:
    """Undo :func:`mark_waiting_queued` for blocks whose message could not be sent (the broker
    failed): they are due again at the next pass, as if never marked (unless marked since)."""
    if not block_ids:
        return
    with engine.begin() as conn:
        conn.execute(
            update(blocks)
            .where(blocks.c.id.in_(list(block_ids)), blocks.c.queued_at == at)
            .values(queued_at=None)
        )


def waits(
    engine: Engine,
    league_id: int,
    said: set[tuple[int, int, str]],
    *,
    lease_s: float,
    renew_s: float,
    worker: str = "",
) -> list[str]:
    """One line for each new thing the league's running blocks wait for (``said`` keeps what was
    told already): a remote bot to connect (``blocks.waiting``), a lease nobody renews any more to
    expire (its worker is gone, or cannot reach the store), and, for a runner that plays as
    ``worker``, a block another worker is playing. What ``league run`` says while it waits."""
    now = _now()
    query = select(blocks).where(blocks.c.league_id == league_id, blocks.c.status == "running")
    with engine.connect() as conn:
        rows = list(conn.execute(query.order_by(blocks.c.number)))
    lines = []
    for row in rows:
        lease = _aware(row.lease_until)
        left = (lease - now).total_seconds() if lease is not None else 0.0
        if row.waiting:
            what, key = f"block {row.number}: {row.waiting}", row.waiting.split(" (gives up")[0]
        elif left < lease_s - 1.5 * renew_s:
            # A worker that plays renews every renew_s to lease_s from then: this lease is not renewed.
            what = (
                f"waiting for block {row.number}'s lease (worker {row.claimed_by}) to expire"
                f" in ~{max(0.0, left):.0f} s:"
                f" not renewed for {max(0.0, lease_s - left):.0f} s (its worker stopped or lost the store)"
            )
            key = "lease"
        elif worker and row.claimed_by != worker:
            what, key = f"waiting for block {row.number}: worker {row.claimed_by} is playing it", "played"
        else:
            continue
        if (row.id, row.attempts, key) not in said:
            said.add((row.id, row.attempts, key))
            lines.append(what)
    return lines
