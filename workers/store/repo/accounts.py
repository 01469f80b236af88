"""Participant accounts' bots: who owns a bot, which versions are active, and the submissions made
through the API with their validations.

An account owns a bot (``bot_owners``) and so each of its versions; a bot that no account owns is
the platform's (the operator's ``bot submit``, the reference bots). Every read here takes the
account and answers only about what it owns: another account's bot, version or submission is
:class:`NotFoundError`, exactly as one that does not exist, so its ids cannot be probed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, update

from workers.store.repo.common import (
    BotVersion,
    ConflictError,
    NewVersion,
    NotFoundError,
    _add_version,
    _aware,
    _now,
    _version,
)
from workers.store.schema import (
    active_versions,
    bot_accounts,
    bot_owners,
    bot_versions,
    bots,
    league_entrants,
    leagues,
    matches,
    ratings,
    seat_results,
    submissions,
    transcripts,
)

PENDING, VALID, INVALID, REFUSED = "pending", "valid", "invalid", "refused"


class QuotaError(ConflictError):
    """An account's uploads of the day are used up."""


def account_of_bot(conn: Any, name: str) -> int | bool | None:
    """The id of the account that owns bot ``name``; ``None``: no such bot; ``False``: the platform's."""
    bot_id = conn.execute(select(bots.c.id).where(bots.c.name == name)).scalar()
    if bot_id is None:
        return None
    owner = conn.execute(select(bot_owners.c.account_id).where(bot_owners.c.bot_id == bot_id)).scalar()
    return False if owner is None else int(owner)


def may_submit(engine: Engine, account_id: int, name: str) -> None:
    """:class:`ConflictError` unless ``account_id`` may add a version to bot ``name`` (its own, or new)."""
    with engine.connect() as conn:
        owner = account_of_bot(conn, name)
    if owner is not None and owner != account_id:
        raise ConflictError(f"the bot name {name!r} is taken; choose another")


def add_submission(
    engine: Engine,
    account_id: int,
    key_id: str,
    bot: str,
    variant: str,
    *,
    status: str = PENDING,
    reason: str | None = None,
    sha256: str | None = None,
    entry_point: str | None = None,
    per_day: tuple[int, dt.datetime] | None = None,
) -> int:
    """Record an upload (pending, or refused with its reason); returns its id.

    ``per_day`` (quota, since): a pending upload past the account's ``quota`` accepted uploads since
    ``since`` is :class:`QuotaError`, counted in the same transaction as the insert, under the
    account's row lock, so uploads at once cannot pass it together.
    """
    with engine.begin() as conn:
        if per_day is not None and status != REFUSED:
            quota, since = per_day
            conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.id == account_id).with_for_update())
            used = conn.execute(
                select(func.count())
                .select_from(submissions)
                .where(
                    submissions.c.account_id == account_id,
                    submissions.c.status != REFUSED,
                    submissions.c.created_at >= since,
                )
            ).scalar_one()
            if used >= quota:
                raise QuotaError(f"daily submission quota of {quota} used; next at 00:00 UTC")
        return int(
            conn.execute(
                insert(submissions)
                .values(
                    account_id=account_id,
                    key_id=key_id,
                    bot=bot[:100],
                    variant=variant[:40],
                    status=status,
                    reason=reason,
                    sha256=sha256,
                    entry_point=entry_point,
                    finished_at=_now() if status == REFUSED else None,
                )
                .returning(submissions.c.id)
            ).scalar_one()
        )


def submissions_since(engine: Engine, account_id: int, since: dt.datetime) -> int:
    """How many uploads of the account since ``since`` were accepted (refusals do not count)."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count())
                .select_from(submissions)
                .where(
                    submissions.c.account_id == account_id,
                    submissions.c.status != REFUSED,
                    submissions.c.created_at >= since,
                )
            ).scalar_one()
        )


def finish_submission(
    engine: Engine,
    submission_id: int,
    *,
    new: NewVersion | None,
    report: dict[str, Any] | None,
    reason: str | None = None,
    transcript: str | None = None,
) -> dict[str, Any]:
    """End a pending submission: valid (``new`` is stored as a version the account owns, in the same
    transaction) or invalid (``new`` is ``None``; ``reason`` says why). Returns it as :func:`submission`."""
    with engine.begin() as conn:
        row = conn.execute(select(submissions).where(submissions.c.id == submission_id)).one()
        version_id = None
        status = VALID if new is not None else INVALID
        if new is not None:
            owner = account_of_bot(conn, new.bot)
            if owner is not None and owner != row.account_id:  # taken while it was validated
                status, reason = INVALID, f"the bot name {new.bot!r} is taken; choose another"
            else:
                version, _ = _add_version(conn, new)
                version_id = version.id
                if owner is None:
                    bot_id = conn.execute(select(bots.c.id).where(bots.c.name == new.bot)).scalar_one()
                    conn.execute(insert(bot_owners).values(bot_id=bot_id, account_id=row.account_id))
        conn.execute(
            update(submissions)
            .where(submissions.c.id == submission_id)
            .values(
                status=status,
                reason=reason,
                report=report,
                transcript=transcript,
                bot_version_id=version_id,
                finished_at=_now(),
            )
        )
    return submission(engine, int(row.account_id), submission_id, logs=False)


def abandon_pending(engine: Engine, reason: str, *, older_than: dt.timedelta) -> int:
    """Mark the submissions pending for longer than ``older_than`` invalid with ``reason`` (their
    validation was lost: the API that ran it stopped); returns how many."""
    with engine.begin() as conn:
        done = conn.execute(
            update(submissions)
            .where(submissions.c.status == PENDING, submissions.c.created_at < _now() - older_than)
            .values(status=INVALID, reason=reason, finished_at=_now())
        )
        return int(done.rowcount or 0)


def _version_label(conn: Any, version_id: int | None) -> str | None:
    if version_id is None:
        return None
    row = conn.execute(
        select(bots.c.name, bot_versions.c.version)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bot_versions.c.id == version_id)
    ).one()
    return f"{row.name}@{row.version}"


def _submission_json(conn: Any, row: Any, *, logs: bool) -> dict[str, Any]:
    created, finished = _aware(row.created_at), _aware(row.finished_at)
    out = {
        "id": row.id,
        "bot": row.bot,
        "variant": row.variant,
        "status": row.status,
        "reason": row.reason,
        "sha256": row.sha256,
        "version": _version_label(conn, row.bot_version_id),
        "created_at": created.isoformat() if created else None,
        "finished_at": finished.isoformat() if finished else None,
    }
    if logs:
        out["report"] = row.report
        out["transcript"] = row.transcript
    return out


def submission(engine: Engine, account_id: int, submission_id: int, *, logs: bool = True) -> dict[str, Any]:
    """One of the account's submissions (``logs``: with its report and transcript)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(submissions).where(
                submissions.c.id == submission_id, submissions.c.account_id == account_id
            )
        ).first()
        if row is None:
            raise NotFoundError(f"no submission {submission_id}")
        return _submission_json(conn, row, logs=logs)


def list_submissions(engine: Engine, account_id: int, *, limit: int = 100) -> list[dict[str, Any]]:
    """The account's submissions, newest first (without their logs)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(submissions)
            .where(submissions.c.account_id == account_id)
            .order_by(submissions.c.id.desc())
            .limit(limit)
        ).all()
        return [_submission_json(conn, row, logs=False) for row in rows]


def _owned_versions_query(account_id: int) -> Any:
    return (
        select(bot_versions, bots.c.name, active_versions.c.created_at.label("activated_at"))
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .join(bot_owners, bot_owners.c.bot_id == bots.c.id)
        .outerjoin(active_versions, active_versions.c.bot_version_id == bot_versions.c.id)
        .where(bot_owners.c.account_id == account_id)
        # The account's remote bot has no code to activate: its own command (``bot connect``) plays it.
        .where(bot_versions.c.entry_point.not_like("remote:%"))
    )


def owned_versions(engine: Engine, account_id: int) -> list[dict[str, Any]]:
    """The account's bot versions with code, by bot then version, each with whether it is active."""
    with engine.connect() as conn:
        rows = conn.execute(
            _owned_versions_query(account_id).order_by(bots.c.name, bot_versions.c.version)
        ).all()
        submitted = {
            r.bot_version_id: r.id
            for r in conn.execute(
                select(submissions.c.id, submissions.c.bot_version_id).where(
                    submissions.c.account_id == account_id, submissions.c.bot_version_id.is_not(None)
                )
            )
        }
    ranked = ranks(engine, [r.id for r in rows])
    return [
        {
            "version": f"{r.name}@{r.version}",
            "bot": r.name,
            "number": r.version,
            "variant": r.variant,
            "sha256": r.sha256,
            "active": r.activated_at is not None,
            "retired": r.retired_at is not None,
            "submission": submitted.get(r.id),
            "rank": ranked.get(r.id),
            "created_at": _aware(r.created_at).isoformat() if r.created_at else None,  # type: ignore[union-attr]
        }
        for r in rows
    ]


def ranks(engine: Engine, version_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Each version's rank in the newest league that ranked it: ``{"league", "rank", "of"}``."""
    if not version_ids:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(
            select(league_entrants.c.bot_version_id, leagues.c.name, leagues.c.id, ratings.c.detail)
            .join(leagues, leagues.c.id == league_entrants.c.league_id)
            .join(
                ratings,
                (ratings.c.league_id == league_entrants.c.league_id)
                & (ratings.c.position == league_entrants.c.position),
            )
            .where(league_entrants.c.bot_version_id.in_(version_ids), ratings.c.games > 0)
            .order_by(leagues.c.id.desc())
        ).all()
        sizes = dict(
            conn.execute(
                select(ratings.c.league_id, func.count())
                .where(ratings.c.league_id.in_({r.id for r in rows}))
                .group_by(ratings.c.league_id)
            ).all()
        )
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        rank = (r.detail or {}).get("rank")
        if r.bot_version_id not in out and rank is not None:
            out[r.bot_version_id] = {"league": r.name, "rank": rank, "of": int(sizes.get(r.id, 0))}
    return out


def public_standings(engine: Engine, league: str) -> dict[str, Any]:
    """A league's stored table, best first: each entrant's label, rank, fitted score, games and
    faults, never a log (public)."""
    with engine.connect() as conn:
        found = conn.execute(select(leagues.c.id, leagues.c.variant).where(leagues.c.name == league)).first()
        if found is None:
            raise NotFoundError(f"no league {league!r}")
        rows = conn.execute(
            select(ratings, bots.c.name, bot_versions.c.version)
            .join(
                league_entrants,
                (league_entrants.c.league_id == ratings.c.league_id)
                & (league_entrants.c.position == ratings.c.position),
            )
            .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .where(ratings.c.league_id == found.id)
        ).all()
    table = [
        {
            "bot": f"{r.name}@{r.version}",
            "rank": (r.detail or {}).get("rank") if r.games else None,
            "score": r.score,
            "games": r.games,
            "mean_score": r.mean_score,
            "faults": r.faults,
        }
        for r in rows
    ]
    table.sort(key=lambda row: (row["rank"] is None, row["rank"] or 0, row["bot"]))
    return {"league": league, "variant": found.variant, "standings": table}


def owned_version(engine: Engine, account_id: int, ref: str) -> BotVersion:
    """The account's version ``NAME@N``; :class:`NotFoundError` for any other (another's too)."""
    name, _, number = ref.partition("@")
    if not number.isdigit():
        raise NotFoundError(f"no version {ref!r}: name it NAME@N")
    with engine.connect() as conn:
        row = conn.execute(
            _owned_versions_query(account_id).where(
                bots.c.name == name, bot_versions.c.version == int(number)
            )
        ).first()
    if row is None:
        raise NotFoundError(f"no version {ref!r}")
    return _version(row, row.name)


def set_active(engine: Engine, account_id: int, ref: str, active: bool, *, max_active: int) -> dict[str, Any]:
    """Activate or deactivate the account's version ``ref``; at most ``max_active`` active at once
    (:class:`ConflictError` past it, and for a retired version). Returns the version's new state."""
    version = owned_version(engine, account_id, ref)
    with engine.begin() as conn:
        # The account's row, locked (PostgreSQL): two activations at once cannot both pass the count.
        conn.execute(select(bot_accounts.c.id).where(bot_accounts.c.id == account_id).with_for_update())
        is_active = (
            conn.execute(
                select(active_versions.c.bot_version_id).where(active_versions.c.bot_version_id == version.id)
            ).first()
            is not None
        )
        if active and not is_active:
            if version.retired:
                raise ConflictError(f"{ref} is retired: a retired version cannot be active")
            count = conn.execute(
                select(func.count())
                .select_from(active_versions)
                .where(active_versions.c.account_id == account_id)
            ).scalar_one()
            if count >= max_active:
                raise ConflictError(
                    f"{count} versions are active already, the most an account may have: deactivate one first"
                )
            conn.execute(insert(active_versions).values(bot_version_id=version.id, account_id=account_id))
        elif not active and is_active:
            conn.execute(delete(active_versions).where(active_versions.c.bot_version_id == version.id))
    return {"version": ref, "active": active, "changed": active != is_active}


def owned_faults(engine: Engine, account_id: int, ref: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """The league seats of the account's version ``ref`` that had faults, newest first: the match,
    the fault counts and the fault detail (reasons, the process's exit, the end of its stderr)."""
    version = owned_version(engine, account_id, ref)
    with engine.connect() as conn:
        rows = conn.execute(
            select(seat_results, matches.c.created_at)
            .join(matches, matches.c.id == seat_results.c.match_id)
            .where(seat_results.c.bot_version_id == version.id, seat_results.c.fault_detail.is_not(None))
            .order_by(seat_results.c.match_id.desc())
            .limit(limit)
        ).all()
    return [
        {
            "match": r.match_id,
            "seat": r.seat,
            "score": r.score,
            "rank": r.rank,
            "faults": {
                name: getattr(r, name)
                for name in ("timeouts", "crashes", "disconnects", "illegal", "protocol", "exceptions")
                if getattr(r, name)
            },
            "detail": r.fault_detail,
        }
        for r in rows
    ]


def owned_transcript(engine: Engine, account_id: int, match_id: int) -> str:
    """The transcript of a league match one of the account's versions played in."""
    with engine.connect() as conn:
        seat = conn.execute(
            select(seat_results.c.seat)
            .join(bot_versions, bot_versions.c.id == seat_results.c.bot_version_id)
            .join(bot_owners, bot_owners.c.bot_id == bot_versions.c.bot_id)
            .where(seat_results.c.match_id == match_id, bot_owners.c.account_id == account_id)
        ).first()
        body = (
            None
            if seat is None
            else conn.execute(select(transcripts.c.body).where(transcripts.c.match_id == match_id)).scalar()
        )
    if body is None:
        raise NotFoundError(f"no transcript of match {match_id}")
    return str(body)
