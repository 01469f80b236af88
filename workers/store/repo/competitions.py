"""Competitions: their settings and state, the accounts that entered them, and their public tables.

A competition (``sixnimmt competition create``) plays a season, a ladder league of the entered
accounts' active versions, then a final, an adaptive league among the season's top entrants
(:mod:`workers.competition`). Everything read here is public except :func:`entrant_versions`' ids:
the tables name versions and their accounts' display names, never a log or code.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from workers.store.repo.common import BotVersion, ConflictError, NotFoundError, _aware, _now, _version
from workers.store.schema import (
    active_versions,
    blocks,
    bot_accounts,
    bot_owners,
    bot_versions,
    bots,
    competitions,
    league_entrants,
    leagues,
    ratings,
    submissions,
)
from workers.store.schema import (
    competition_entries as entries_table,
)

SEASON, FINAL, FINISHED = "season", "final", "finished"


@dataclass(frozen=True, slots=True)
class Competition:
    """A competition's definition and state."""

    id: int
    name: str
    variant: str
    config: dict[str, Any]
    table_size: int
    submissions_per_day: int
    active_per_account: int
    ends_at: dt.datetime | None
    final_top: int
    final_until_confident: float
    final_max_deals: int
    season_rule: dict[str, Any] | None
    state: str
    season_league_id: int | None
    final_league_id: int | None
    created_at: dt.datetime | None
    closed_at: dt.datetime | None
    synced_at: dt.datetime | None = None

    def ended(self, now: dt.datetime | None = None) -> bool:
        """Whether its season is over: closed, or past its end."""
        if self.state != SEASON:
            return True
        return self.ends_at is not None and (now or _now()) >= self.ends_at

    def settings(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "config": self.config,
            "table_size": self.table_size,
            "submissions_per_day": self.submissions_per_day,
            "active_per_account": self.active_per_account,
            "ends_at": self.ends_at.isoformat() if self.ends_at else None,
            "final_top": self.final_top,
            "final_until_confident": self.final_until_confident,
            "final_max_deals": self.final_max_deals,
            "placement": (self.season_rule or {}).get("placement"),
            "round_deals": (self.season_rule or {}).get("round_deals"),
            "state": self.state,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "closed_at": self.closed_at.isoformat() if self.closed_at else None,
        }


def _competition(row: Any) -> Competition:
    return Competition(
        int(row.id),
        row.name,
        row.variant,
        dict(row.config or {}),
        int(row.table_size),
        int(row.submissions_per_day),
        int(row.active_per_account),
        _aware(row.ends_at),
        int(row.final_top),
        float(row.final_until_confident),
        int(row.final_max_deals),
        row.season_rule,
        row.state,
        row.season_league_id,
        row.final_league_id,
        _aware(row.created_at),
        _aware(row.closed_at),
        _aware(row.synced_at),
    )


def create_competition(
    engine: Engine,
    name: str,
    *,
    variant: str,
    config: dict[str, Any],
    table_size: int,
    submissions_per_day: int,
    active_per_account: int,
    ends_at: dt.datetime | None,
    final_top: int,
    final_until_confident: float,
    final_max_deals: int,
    season_rule: dict[str, Any] | None = None,
) -> Competition:
    """Store a new competition in its season (:class:`ConflictError` for a name that is taken)."""
    try:
        with engine.begin() as conn:
            conn.execute(
                insert(competitions).values(
                    name=name,
                    variant=variant,
                    config=config,
                    table_size=table_size,
                    submissions_per_day=submissions_per_day,
                    active_per_account=active_per_account,
                    ends_at=ends_at,
                    final_top=final_top,
                    final_until_confident=final_until_confident,
                    final_max_deals=final_max_deals,
                    season_rule=season_rule,
                    state=SEASON,
                )
            )
    except IntegrityError as exc:
        raise ConflictError(f"a competition named {name!r} exists already") from exc
    return find_competition(engine, name)


def find_competition(engine: Engine, name: str) -> Competition:
    """A competition by name (:class:`NotFoundError` if there is none)."""
    with engine.connect() as conn:
        row = conn.execute(select(competitions).where(competitions.c.name == name)).first()
    if row is None:
        raise NotFoundError(f"no competition {name!r}")
    return _competition(row)


def update_competition(engine: Engine, competition_id: int, **values: Any) -> None:
    """Set a competition's state, leagues or close time (``state``, ``season_league_id``, …)."""
    with engine.begin() as conn:
        conn.execute(update(competitions).where(competitions.c.id == competition_id).values(**values))


def list_competitions(engine: Engine) -> list[dict[str, Any]]:
    """Every competition's settings and state, with its number of entered accounts, newest first."""
    with engine.connect() as conn:
        rows = conn.execute(select(competitions).order_by(competitions.c.id.desc())).all()
        counts = dict(
            conn.execute(
                select(entries_table.c.competition_id, func.count()).group_by(entries_table.c.competition_id)
            ).all()
        )
    return [{**_competition(r).settings(), "entries": int(counts.get(r.id, 0))} for r in rows]


def _league_name(conn: Any, league_id: int | None) -> str | None:
    if league_id is None:
        return None
    return conn.execute(select(leagues.c.name).where(leagues.c.id == league_id)).scalar()


def league_table(conn: Any, league_id: int) -> list[dict[str, Any]]:
    """A league's stored table, best first, public: each version, its account's display name, its
    rank with the rank interval, its fitted score with its interval, games, faults, and whether the
    table tells it apart from the next one down."""
    rows = conn.execute(
        select(
            ratings,
            bots.c.name,
            bot_versions.c.version,
            func.coalesce(bot_accounts.c.display_name, bot_accounts.c.name).label("account"),
        )
        .join(
            league_entrants,
            (league_entrants.c.league_id == ratings.c.league_id)
            & (league_entrants.c.position == ratings.c.position),
        )
        .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .outerjoin(bot_owners, bot_owners.c.bot_id == bots.c.id)
        .outerjoin(bot_accounts, bot_accounts.c.id == bot_owners.c.account_id)
        .where(ratings.c.league_id == league_id)
    ).all()
    labels = {int(r.position): f"{r.name}@{r.version}" for r in rows}
    table = []
    for r in rows:
        detail = r.detail or {}
        following = detail.get("next") or None
        table.append(
            {
                "bot": labels[int(r.position)],
                "account": r.account,
                "rank": detail.get("rank") if r.games else None,
                "rank_low": detail.get("rank_low") if r.games else None,
                "rank_high": detail.get("rank_high") if r.games else None,
                "score": r.score if r.games else None,
                "score_low": detail.get("score_low"),
                "score_high": detail.get("score_high"),
                "games": r.games,
                "mean_score": r.mean_score if r.games else None,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "faults": r.faults,
                "next": None
                if following is None
                else {
                    "bot": labels.get(int(following["position"])),
                    "gap": following.get("gap"),
                    "low": following.get("low"),
                    "high": following.get("high"),
                    "told_apart": bool(following.get("distinct")),
                },
            }
        )
    table.sort(key=lambda row: (row["rank"] is None, row["rank"] or 0, row["bot"]))
    return table


def competition(engine: Engine, name: str) -> dict[str, Any]:
    """A competition's public page: its settings and state, its entries, and the tables of its
    season and final (``None`` for a phase not begun) with their league names."""
    found = find_competition(engine, name)
    with engine.connect() as conn:
        season = _league_name(conn, found.season_league_id)
        final = _league_name(conn, found.final_league_id)
        out = {
            **found.settings(),
            # Past its end: submissions and entries are refused, though nobody has closed it yet.
            "frozen": found.ended(),
            "entries": len(_entries(conn, found.id)),
            "season": None
            if found.season_league_id is None
            else {"league": season, "standings": league_table(conn, found.season_league_id)},
            "final": None
            if found.final_league_id is None
            else {"league": final, "standings": league_table(conn, found.final_league_id)},
        }
    return out


def _entries(conn: Any, competition_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(
            bot_accounts.c.id,
            bot_accounts.c.name,
            bot_accounts.c.display_name,
            entries_table.c.created_at,
        )
        .join(bot_accounts, bot_accounts.c.id == entries_table.c.account_id)
        .where(entries_table.c.competition_id == competition_id)
        .order_by(entries_table.c.created_at, bot_accounts.c.id)
    ).all()
    return [
        {
            "account_id": int(r.id),
            "account": r.display_name or r.name,
            "created_at": _aware(r.created_at).isoformat() if r.created_at else None,  # type: ignore[union-attr]
        }
        for r in rows
    ]


def competition_entries(engine: Engine, name: str) -> list[dict[str, Any]]:
    """The accounts that entered competition ``name``, first entered first (display names)."""
    found = find_competition(engine, name)
    with engine.connect() as conn:
        return [{k: v for k, v in e.items() if k != "account_id"} for e in _entries(conn, found.id)]


def has_entered(engine: Engine, competition_id: int, account_id: int) -> bool:
    with engine.connect() as conn:
        return (
            conn.execute(
                select(entries_table.c.account_id).where(
                    entries_table.c.competition_id == competition_id,
                    entries_table.c.account_id == account_id,
                )
            ).first()
            is not None
        )


def enter(engine: Engine, competition_id: int, account_id: int) -> bool:
    """Enter an account into a competition; returns whether it was new (entering twice is one entry)."""
    if has_entered(engine, competition_id, account_id):
        return False
    try:
        with engine.begin() as conn:
            conn.execute(insert(entries_table).values(competition_id=competition_id, account_id=account_id))
    except IntegrityError:  # entered at the same moment by another request
        return False
    return True


def entrant_versions(engine: Engine, found: Competition) -> list[tuple[BotVersion, int]]:
    """The versions that may play its season now, each with its account's id: the entered accounts'
    active versions of its variant that are not retired, first activated first."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(bot_versions, bots.c.name, active_versions.c.account_id)
            .join(bots, bots.c.id == bot_versions.c.bot_id)
            .join(active_versions, active_versions.c.bot_version_id == bot_versions.c.id)
            .join(
                entries_table,
                (entries_table.c.account_id == active_versions.c.account_id)
                & (entries_table.c.competition_id == found.id),
            )
            .where(bot_versions.c.variant == found.variant, bot_versions.c.retired_at.is_(None))
            .order_by(active_versions.c.created_at, bot_versions.c.id)
        ).all()
    return [(_version(r, r.name), int(r.account_id)) for r in rows]


def valid_submissions_between(
    engine: Engine, competition_id: int, since: dt.datetime | None, until: dt.datetime
) -> list[tuple[int, str]]:
    """The valid submissions made for a competition that finished after ``since`` (``None``: any)
    and by ``until``, first finished first: each as (account id, ``NAME@N`` of its version)."""
    query = (
        select(submissions.c.account_id, bots.c.name, bot_versions.c.version)
        .join(bot_versions, bot_versions.c.id == submissions.c.bot_version_id)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(
            submissions.c.competition_id == competition_id,
            submissions.c.status == "valid",
            submissions.c.finished_at <= until,
        )
        .order_by(submissions.c.finished_at, submissions.c.id)
    )
    if since is not None:
        query = query.where(submissions.c.finished_at > since)
    with engine.connect() as conn:
        return [(int(r.account_id), f"{r.name}@{r.version}") for r in conn.execute(query)]


def is_active(engine: Engine, version_id: int) -> bool:
    with engine.connect() as conn:
        found = conn.execute(
            select(active_versions.c.bot_version_id).where(active_versions.c.bot_version_id == version_id)
        ).first()
    return found is not None


def active_count(engine: Engine, account_id: int, variant: str) -> int:
    """How many of an account's versions of ``variant`` are active."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count())
                .select_from(active_versions)
                .join(bot_versions, bot_versions.c.id == active_versions.c.bot_version_id)
                .where(active_versions.c.account_id == account_id, bot_versions.c.variant == variant)
            ).scalar_one()
        )


def competition_submissions_since(
    engine: Engine, competition_id: int, account_id: int, since: dt.datetime
) -> int:
    """An account's submissions for a competition since ``since`` (refused uploads not counted)."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count())
                .select_from(submissions)
                .where(
                    submissions.c.account_id == account_id,
                    submissions.c.competition_id == competition_id,
                    submissions.c.created_at >= since,
                    submissions.c.status != "refused",
                )
            ).scalar_one()
        )


def set_submission_competition(engine: Engine, submission_id: int, competition_id: int) -> None:
    """Record which competition a submission was made for."""
    with engine.begin() as conn:
        conn.execute(
            update(submissions).where(submissions.c.id == submission_id).values(competition_id=competition_id)
        )


def drop_pending_blocks(engine: Engine, league_id: int) -> int:
    """Remove a league's blocks that nobody has claimed (a season that ends plays no more); returns
    how many."""
    with engine.begin() as conn:
        result = conn.execute(
            delete(blocks).where(blocks.c.league_id == league_id, blocks.c.status == "pending")
        )
    return int(result.rowcount or 0)
