"""The dashboard's reads of the league store: each one index-backed, paginated where it can grow.

Every function takes an open connection and returns plain JSON-ready values (the API serves them
as they are, the templates render them). Names of bot versions are looked up once per page for
all the rows on it, never once per row. Nothing here writes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, literal, select

from referee.clikit.stats import t_interval
from referee.faults import short_reason
from workers.planning import adaptive, deals
from workers.play.faults import describe_exit, parse_detail
from workers.stats import ranking
from workers.store.repo import NotFoundError, labels_apart
from workers.store.schema import (
    FAULT_COLUMNS,
    blocks,
    bot_versions,
    bots,
    human_matches,
    human_seats,
    human_transcripts,
    league_entrants,
    leagues,
    matches,
    ratings,
    seat_results,
    transcripts,
)

STATUSES = ("pending", "running", "done", "failed")
MAX_ID = 2**31 - 1
"""Ids are 32-bit in PostgreSQL: a larger one names nothing (and must not reach the driver)."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a list: 1-based number, size, and the total number of rows."""

    number: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        """How many pages the list has (at least one, even when empty)."""
        return max(1, -(-self.total // self.size))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    def to_json(self) -> dict[str, int]:
        return {"page": self.number, "per_page": self.size, "total": self.total, "pages": self.pages}


def _when(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:  # SQLite keeps no zone; the store writes UTC
        value = value.replace(tzinfo=dt.UTC)
    return value.isoformat(timespec="seconds")


def _faults(row: Any) -> dict[str, int]:
    return {kind: int(row._mapping[column]) for kind, column in FAULT_COLUMNS.items()}


# -- names -----------------------------------------------------------------------------------


def version_labels(conn: Connection, version_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Bot id, name and version number of each bot version, in one query."""
    ids = sorted(set(version_ids))
    if not ids:
        return {}
    rows = conn.execute(
        select(bot_versions.c.id, bot_versions.c.bot_id, bot_versions.c.version, bots.c.name)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(bot_versions.c.id.in_(ids))
    )
    return {
        r.id: {"bot_id": r.bot_id, "bot": r.name, "version": r.version, "label": f"{r.name}@{r.version}"}
        for r in rows
    }


def lineups(conn: Connection, league_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """The entrants of these leagues in position order, with their bot names, in one query."""
    if not league_ids:
        return {}
    rows = conn.execute(
        select(
            league_entrants.c.league_id,
            league_entrants.c.position,
            league_entrants.c.bot_version_id,
            bot_versions.c.bot_id,
            bot_versions.c.version,
            bots.c.name,
        )
        .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
        .join(bots, bots.c.id == bot_versions.c.bot_id)
        .where(league_entrants.c.league_id.in_(list(league_ids)))
        .order_by(league_entrants.c.league_id, league_entrants.c.position)
    )
    found: dict[int, list[dict[str, Any]]] = {league_id: [] for league_id in league_ids}
    for r in rows:
        found[r.league_id].append(
            {
                "position": r.position,
                "bot_version_id": r.bot_version_id,
                "bot_id": r.bot_id,
                "bot": r.name,
                "version": r.version,
                "label": f"{r.name}@{r.version}",
            }
        )
    for lineup in found.values():  # a bot entered k times on purpose: #1 … #k, as the command line
        for entrant, label in zip(lineup, labels_apart([e["label"] for e in lineup]), strict=True):
            entrant["label"] = label
    return found


def entrants(conn: Connection, league_id: int) -> list[dict[str, Any]]:
    """A league's entrants in position order, with their bot names."""
    return lineups(conn, [league_id])[league_id]


# -- leagues ---------------------------------------------------------------------------------


def _progress(conn: Connection, league_ids: Sequence[int] | None = None) -> dict[int, dict[str, int]]:
    """Blocks by status per league (the (league_id, status) index answers it alone)."""
    query = select(blocks.c.league_id, blocks.c.status, func.count()).group_by(
        blocks.c.league_id, blocks.c.status
    )
    if league_ids is not None:
        if not league_ids:
            return {}
        query = query.where(blocks.c.league_id.in_(league_ids))
    progress: dict[int, dict[str, int]] = {}
    for league_id, status, count in conn.execute(query):
        progress.setdefault(league_id, dict.fromkeys(STATUSES, 0))[status] = int(count)
    for counts in progress.values():
        counts["total"] = sum(counts[s] for s in STATUSES)
    return progress


def _league_json(row: Any, progress: dict[str, int]) -> dict[str, Any]:
    done = progress.get("done", 0)
    return {
        "id": row.id,
        "name": row.name,
        "variant": row.variant,
        "format": row.format,
        "table_size": row.table_size,
        "deals": row.deals,
        "created_at": _when(row.created_at),
        "blocks": {s: progress.get(s, 0) for s in (*STATUSES, "total")},
        # A block is stored whole, one match per seat rotation: done blocks × table size.
        "matches": done * row.table_size,
    }


def list_leagues(conn: Connection) -> list[dict[str, Any]]:
    """Every league, newest first, with its progress."""
    progress = _progress(conn)
    rows = conn.execute(
        select(
            leagues.c.id,
            leagues.c.name,
            leagues.c.variant,
            leagues.c.format,
            leagues.c.table_size,
            leagues.c.deals,
            leagues.c.created_at,
        ).order_by(leagues.c.id.desc())
    )
    return [_league_json(r, progress.get(r.id, {})) for r in rows]


def league(conn: Connection, league_id: int) -> dict[str, Any]:
    """A league's definition, progress and entrants; :class:`NotFoundError` if there is none."""
    if not 0 < league_id <= MAX_ID:
        raise NotFoundError(f"no league {league_id}")
    row = conn.execute(
        select(
            leagues.c.id,
            leagues.c.name,
            leagues.c.variant,
            leagues.c.format,
            leagues.c.table_size,
            leagues.c.deals,
            leagues.c.created_at,
            leagues.c.seed,
            leagues.c.deal_key,
            leagues.c.finished_at,
            leagues.c.config,
        ).where(leagues.c.id == league_id)
    ).first()
    if row is None:
        raise NotFoundError(f"no league {league_id}")
    info = _league_json(row, _progress(conn, [league_id]).get(league_id, {}))
    # The seed and deal key are published once the league is finished; a commitment until then.
    key = None if row.deal_key is None else bytes(row.deal_key)
    shown = deals.shown(int(row.seed), key, row.finished_at is not None)
    info["seed"] = shown["seed"]
    info["deal_key"] = shown["deal_key"]
    info["deal_commitment"] = shown["commitment"]
    info["deals_secret"] = shown.get("secret")
    info["config"] = dict(row.config)
    info["entrants"] = entrants(conn, league_id)
    return info


def standings(conn: Connection, info: dict[str, Any]) -> dict[str, Any]:
    """The league table as last computed by the league (the ``ratings`` table), best first.

    The order is the batch fit's (``score``, see :mod:`workers.stats.ranking`); each row carries its
    interval, rank interval and the gap to the next entrant with whether the two are told apart.
    OpenSkill's ``rating`` (mu − 3 sigma) is the online rating, shown for matchmaking only.
    Entrants without a stored line come last with ``None`` numbers. ``rated_games`` against
    ``stored_games`` tells whether the table is behind the stored matches (a league still running).
    """
    by_position = {e["position"]: e for e in info["entrants"]}
    rows = []
    designs = []
    for r in conn.execute(select(ratings).where(ratings.c.league_id == info["id"])):
        entrant = by_position.get(r.position)
        if entrant is None:
            continue
        detail = dict(r.detail or {})
        designs.append(detail.get("design"))
        rows.append(
            {
                **entrant,
                "method": r.method,
                "score": r.score,
                "score_low": detail.get("score_low"),
                "score_high": detail.get("score_high"),
                "rank": detail.get("rank"),
                "rank_low": detail.get("rank_low"),
                "rank_high": detail.get("rank_high"),
                "next": detail.get("next"),
                "rating": r.ordinal,
                "mu": r.mu,
                "sigma": r.sigma,
                "games": r.games,
                "mean_score": r.mean_score,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "faults": r.faults,
            }
        )
    # A table stored before the batch fit existed has no rank: the online rating orders it. An
    # entrant without games has no place at all (it comes last, unranked).
    rows.sort(key=lambda r: (not r["games"], r["rank"] is None, r["rank"] or 0, -r["rating"], r["position"]))
    for place, row in enumerate(rows, 1):
        row["place"] = place if row["games"] else None
        if not row["games"]:
            row.update(rank=None, rank_low=None, rank_high=None)
    rated = {r["position"] for r in rows}
    blank = ("method", "score", "score_low", "score_high", "rank", "rank_low", "rank_high", "next", "rating")
    unrated = [
        {**e, "place": None, **dict.fromkeys(blank), "mu": None, "sigma": None, "games": None}
        | {"mean_score": None, "ci_low": None, "ci_high": None, "faults": None}
        for e in info["entrants"]
        if e["position"] not in rated
    ]
    design = next((d for d in designs if d), None)
    return {
        "rows": rows + unrated,
        "method": next((r["method"] for r in rows if r["method"]), None),
        "rated_games": sum(r["games"] for r in rows),
        "stored_games": info["matches"] * info["table_size"],
        "design": design,
        "scope": None if design is None else _scope(design),
        "stopping_rule": _stopping_words(conn, info),
    }


def _scope(design: str) -> str:
    """What the stored table's scores are measured over (the words of ``league standings``)."""
    return ranking.scope(ranking.Standings("ls", False, 0.95, [], [], 1, design=design))


def _stopping_words(conn: Connection, info: dict[str, Any]) -> str | None:
    """An adaptive league's stopping rule in the words ``league status`` and ``league standings`` use."""
    stopping = conn.execute(select(leagues.c.stopping).where(leagues.c.id == info["id"])).scalar()
    if not isinstance(stopping, dict) or stopping.get("kind") != adaptive.KIND:
        return None
    return adaptive.rule_words(float(stopping["until_confident"]), len(info["entrants"]))


# -- matches ---------------------------------------------------------------------------------


def _page(number: int, size: int, total: int) -> Page:
    page = Page(number, size, total)
    if number > page.pages:
        raise NotFoundError(f"no page {number}: the list has {page.pages}")
    return page


def seats_of(
    conn: Connection, match_ids: Sequence[int], *, detail: bool = False
) -> dict[int, list[dict[str, Any]]]:
    """The seat results of these matches with bot names, by match id (two queries in all).

    With ``detail``, each seat also has its ``fault_detail`` (reasons, process exit, stderr tail);
    lists leave that column unread.
    """
    return _seats(conn, seat_results, match_ids, detail=detail)


def _seats(
    conn: Connection, table: Any, match_ids: Sequence[int], *, detail: bool = False
) -> dict[int, list[dict[str, Any]]]:
    """:func:`seats_of` over ``table``: ``seat_results`` (a league's matches) or ``human_seats``
    (games against people, where a seat without a bot version is the person's: ``person`` is its
    seat name, ``human:NAME``)."""
    if not match_ids:
        return {}
    columns = [c for c in table.c if detail or c.name != "fault_detail"]
    rows = conn.execute(
        select(*columns).where(table.c.match_id.in_(list(match_ids))).order_by(table.c.match_id, table.c.seat)
    ).all()
    names = version_labels(conn, (r.bot_version_id for r in rows if r.bot_version_id is not None))
    unknown = {"bot_id": None, "bot": "?", "version": None, "label": "?"}
    seats: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        faults = _faults(r)
        person = r._mapping.get("person")
        named = (
            {"bot_id": None, "bot": None, "version": None, "label": person, "person": person}
            if person is not None
            else names.get(r.bot_version_id, unknown)
        )
        seats.setdefault(r.match_id, []).append(
            {
                "seat": r.seat,
                "position": r._mapping.get("position", r.seat),
                "bot_version_id": r.bot_version_id,
                **named,
                "score": r.score,
                "rank": r.rank,
                "faults": sum(faults.values()),
                "fault_kinds": {k: v for k, v in faults.items() if v},
                "defaulted": r.defaulted,
                "forfeited": bool(r.forfeited),
                "think_ms": r.think_ms,
                **({"fault_detail": _fault_detail(r.fault_detail)} if detail else {}),
            }
        )
    return seats


def _fault_detail(text: str | None) -> dict[str, Any] | None:
    """A stored fault_detail, ready to show: each reason also on one line, the exit in words."""
    found = parse_detail(text)
    if found is None:
        return None
    faults = [f for f in found.get("faults") or () if isinstance(f, dict)]
    exit = found.get("exit") if isinstance(found.get("exit"), dict) else None
    return {
        "faults": [
            {
                "kind": str(f.get("kind", "")),
                "count": int(f.get("count") or 0),
                "reason": str(f.get("reason", "")),
                "short": short_reason(str(f.get("reason", ""))),
            }
            for f in faults
        ],
        "exit": None
        if exit is None
        else {
            "how": describe_exit(exit),
            "clean": exit.get("status") == 0,
            "stderr": str(exit.get("stderr") or ""),
        },
    }


def _match_rows(conn: Connection, query: Any) -> list[dict[str, Any]]:
    return _matches_json(conn, conn.execute(query).all())


def _matches_json(conn: Connection, rows: Sequence[Any], *, detail: bool = False) -> list[dict[str, Any]]:
    seats = seats_of(conn, [r.id for r in rows], detail=detail)
    return [
        {
            "id": r.id,
            "league_id": r.league_id,
            "league": r.league,
            "block": r.number,
            "rotation": r.rotation,
            "termination": r.termination,
            "created_at": _when(r.created_at),
            "seats": seats.get(r.id, []),
        }
        for r in rows
    ]


_MATCH_COLUMNS = (
    matches.c.id,
    matches.c.rotation,
    matches.c.termination,
    matches.c.created_at,
    blocks.c.number,
    blocks.c.league_id,
    leagues.c.name.label("league"),
)


def league_matches(
    conn: Connection, info: dict[str, Any], number: int, size: int
) -> tuple[list[dict[str, Any]], Page]:
    """A page of a league's matches, latest block first (the (league_id, number) and
    (block_id, rotation) unique indexes give the order without sorting)."""
    page = _page(number, size, info["matches"])
    query = (
        select(*_MATCH_COLUMNS)
        .select_from(blocks)
        .join(matches, matches.c.block_id == blocks.c.id)
        .join(leagues, leagues.c.id == blocks.c.league_id)
        .where(blocks.c.league_id == info["id"])
        .order_by(blocks.c.number.desc(), matches.c.rotation)
        .limit(page.size)
        .offset(page.offset)
    )
    return _match_rows(conn, query), page


def version_matches(
    conn: Connection, version_id: int, number: int, size: int
) -> tuple[list[dict[str, Any]], Page]:
    """A page of one bot version's matches, newest first (the (bot_version_id, match_id) index)."""
    total = conn.execute(
        select(func.count()).select_from(seat_results).where(seat_results.c.bot_version_id == version_id)
    ).scalar_one()
    page = _page(number, size, int(total))
    mine = (
        select(seat_results.c.match_id)
        .where(seat_results.c.bot_version_id == version_id)
        .order_by(seat_results.c.match_id.desc())
        .limit(page.size)
        .offset(page.offset)
        .subquery()
    )
    query = (
        select(*_MATCH_COLUMNS)
        .select_from(mine)
        .join(matches, matches.c.id == mine.c.match_id)
        .join(blocks, blocks.c.id == matches.c.block_id)
        .join(leagues, leagues.c.id == blocks.c.league_id)
        .order_by(matches.c.id.desc())
    )
    return _match_rows(conn, query), page


def match(conn: Connection, match_id: int) -> dict[str, Any]:
    """One match with its league, block and seats; :class:`NotFoundError` if there is none."""
    if not 0 < match_id <= MAX_ID:
        raise NotFoundError(f"no match {match_id}")
    query = (
        select(*_MATCH_COLUMNS, matches.c.seed, matches.c.digest, leagues.c.variant)
        .select_from(matches)
        .join(blocks, blocks.c.id == matches.c.block_id)
        .join(leagues, leagues.c.id == blocks.c.league_id)
        .where(matches.c.id == match_id)
    )
    row = conn.execute(query).first()
    if row is None:
        raise NotFoundError(f"no match {match_id}")
    withhold_shared_deal(conn, match_id)
    return _matches_json(conn, [row], detail=True)[0] | {
        "seed": int(row.seed),
        "digest": row.digest,
        "variant": row.variant,
    }


class DealWithheldError(NotFoundError):
    """A stored match whose deal another block of its league plays and has not stored yet."""


def withhold_shared_deal(conn: Connection, match_id: int) -> None:
    """Raise :class:`DealWithheldError` while the match's deal is still to be played elsewhere.

    Deal seeds differ from block to block, but for an SPRT test's pairs (NEW's and OLD's block
    of one deal): the first block's transcript, seed and replay would show the second's deal to
    whoever plays it, so they are shown once every block with that seed is stored.
    """
    mine = (
        select(blocks.c.id, blocks.c.league_id, blocks.c.seed)
        .join(matches, matches.c.block_id == blocks.c.id)
        .where(matches.c.id == match_id)
        .subquery()
    )
    waiting = conn.execute(
        select(blocks.c.number)
        .join(mine, and_(blocks.c.league_id == mine.c.league_id, blocks.c.seed == mine.c.seed))
        .where(blocks.c.id != mine.c.id, blocks.c.status != "done")
        .limit(1)
    ).scalar()
    if waiting is not None:
        raise DealWithheldError(
            f"match {match_id}'s deal is played again in block {waiting}, not stored yet:"
            " its seed, transcript and replay are shown once that block is"
        )


def transcript_body(conn: Connection, match_id: int) -> str:
    """A match's stored transcript (JSON text)."""
    body = conn.execute(select(transcripts.c.body).where(transcripts.c.match_id == match_id)).scalar()
    if body is None:
        raise NotFoundError(f"no transcript for match {match_id}")
    return str(body)


# -- bots ------------------------------------------------------------------------------------


def list_bots(conn: Connection) -> list[dict[str, Any]]:
    """Every bot with its number of versions and newest version."""
    rows = conn.execute(
        select(
            bots.c.id,
            bots.c.name,
            bots.c.created_at,
            func.count(bot_versions.c.id).label("versions"),
            func.max(bot_versions.c.version).label("latest"),
            func.max(bot_versions.c.variant).label("variant"),
        )
        .join(bot_versions, bot_versions.c.bot_id == bots.c.id, isouter=True)
        .group_by(bots.c.id, bots.c.name, bots.c.created_at)
        .order_by(bots.c.name)
    )
    return [
        {
            "id": r.id,
            "name": r.name,
            "versions": r.versions,
            "latest": r.latest,
            "variant": r.variant,
            "created_at": _when(r.created_at),
        }
        for r in rows
    ]


def bot(conn: Connection, bot_id: int) -> dict[str, Any]:
    """A bot with its versions (newest first); :class:`NotFoundError` if there is none."""
    if not 0 < bot_id <= MAX_ID:
        raise NotFoundError(f"no bot {bot_id}")
    row = conn.execute(select(bots).where(bots.c.id == bot_id)).first()
    if row is None:
        raise NotFoundError(f"no bot {bot_id}")
    versions = conn.execute(
        select(bot_versions).where(bot_versions.c.bot_id == bot_id).order_by(bot_versions.c.version.desc())
    ).all()
    return {
        "id": row.id,
        "name": row.name,
        "created_at": _when(row.created_at),
        "versions": [
            {
                "id": v.id,
                "version": v.version,
                "label": f"{row.name}@{v.version}",
                "sha256": v.sha256,
                "entry_point": v.entry_point,
                "variant": v.variant,
                "created_at": _when(v.created_at),
            }
            for v in versions
        ],
    }


def bot_leagues(conn: Connection, version_ids: Sequence[int]) -> list[dict[str, Any]]:
    """Every league entry of these versions, newest league first, with the stored rating."""
    if not version_ids:
        return []
    rows = conn.execute(
        select(
            leagues.c.id,
            leagues.c.name,
            leagues.c.variant,
            leagues.c.table_size,
            leagues.c.created_at,
            league_entrants.c.position,
            league_entrants.c.bot_version_id,
            bot_versions.c.version,
            ratings.c.ordinal,
            ratings.c.score,
            ratings.c.detail,
            ratings.c.mu,
            ratings.c.sigma,
            ratings.c.games,
            ratings.c.mean_score,
            ratings.c.ci_low,
            ratings.c.ci_high,
            ratings.c.faults,
        )
        .select_from(league_entrants)
        .join(leagues, leagues.c.id == league_entrants.c.league_id)
        .join(bot_versions, bot_versions.c.id == league_entrants.c.bot_version_id)
        .join(
            ratings,
            and_(ratings.c.league_id == leagues.c.id, ratings.c.position == league_entrants.c.position),
            isouter=True,
        )
        .where(league_entrants.c.bot_version_id.in_(list(version_ids)))
        .order_by(leagues.c.id.desc(), league_entrants.c.position)
    ).all()
    progress = _progress(conn, sorted({r.id for r in rows}))
    return [
        {
            "league_id": r.id,
            "league": r.name,
            "variant": r.variant,
            "created_at": _when(r.created_at),
            "position": r.position,
            "bot_version_id": r.bot_version_id,
            "version": r.version,
            "done_blocks": progress.get(r.id, {}).get("done", 0),
            "score": r.score,
            # An entrant without games has no rank (a table stored before that rule may give one).
            "rank": (r.detail or {}).get("rank") if r.games else None,
            "rank_low": (r.detail or {}).get("rank_low") if r.games else None,
            "rank_high": (r.detail or {}).get("rank_high") if r.games else None,
            "rating": r.ordinal,
            "mu": r.mu,
            "sigma": r.sigma,
            "games": r.games,
            "mean_score": r.mean_score,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "faults": r.faults,
        }
        for r in rows
    ]


# -- games against people --------------------------------------------------------------------

PEOPLE_GAMES_SHOWN = 20
"""A bot page's latest games against people (the summary counts them all)."""


def _human_json(rows: Sequence[Any], seats: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.id,
            "variant": r.variant,
            "termination": r.termination,
            "created_at": _when(r.created_at),
            "seats": seats.get(r.id, []),
        }
        for r in rows
    ]


def human_match(conn: Connection, match_id: int) -> dict[str, Any]:
    """One game against a person with its seats; :class:`NotFoundError` if there is none."""
    if not 0 < match_id <= MAX_ID:
        raise NotFoundError(f"no game against people {match_id}")
    row = conn.execute(select(human_matches).where(human_matches.c.id == match_id)).first()
    if row is None:
        raise NotFoundError(f"no game against people {match_id}")
    seats = _seats(conn, human_seats, [match_id], detail=True)
    return _human_json([row], seats)[0] | {
        "seed": int(row.seed),
        "digest": row.digest,
        "config": row.config,
        "people": True,
    }


def human_transcript_body(conn: Connection, match_id: int) -> str:
    """A game against a person's stored transcript (JSON text)."""
    body = conn.execute(
        select(human_transcripts.c.body).where(human_transcripts.c.match_id == match_id)
    ).scalar()
    if body is None:
        raise NotFoundError(f"no transcript for the game against people {match_id}")
    return str(body)


def against_people(conn: Connection, versions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """How each of these bot versions (:func:`bot`'s) did against people: games, mean score with its
    95% t interval over games (:func:`referee.clikit.stats.t_interval`), faults, and the people's
    mean score in the same games; versions without such games are left out."""
    ids = [v["id"] for v in versions]
    if not ids:
        return []
    mine = conn.execute(
        select(human_seats.c.bot_version_id, human_seats.c.match_id, human_seats.c.score, *_fault_sum())
        .where(human_seats.c.bot_version_id.in_(ids))
        .order_by(human_seats.c.bot_version_id, human_seats.c.match_id)
    ).all()
    if not mine:
        return []
    people = dict(
        conn.execute(
            select(human_seats.c.match_id, func.avg(human_seats.c.score))
            .where(
                human_seats.c.match_id.in_(sorted({r.match_id for r in mine})),
                human_seats.c.person.is_not(None),
            )
            .group_by(human_seats.c.match_id)
        ).all()
    )
    out = []
    for version in versions:
        scores = [r.score for r in mine if r.bot_version_id == version["id"]]
        if not scores:
            continue
        theirs = [
            float(people[r.match_id])
            for r in mine
            if r.bot_version_id == version["id"] and r.match_id in people
        ]
        low, high = t_interval([float(score) for score in scores])
        out.append(
            {
                "bot_version_id": version["id"],
                "version": version["version"],
                "label": version["label"],
                "variant": version["variant"],
                "games": len(scores),
                "mean_score": sum(scores) / len(scores),
                "ci_low": low,
                "ci_high": high,
                "faults": sum(r.faults for r in mine if r.bot_version_id == version["id"]),
                "people_mean_score": sum(theirs) / len(theirs) if theirs else None,
            }
        )
    return out


def _fault_sum() -> list[Any]:
    total = sum((human_seats.c[column] for column in FAULT_COLUMNS.values()), literal(0))
    return [total.label("faults")]


def people_games(
    conn: Connection, version_ids: Sequence[int], limit: int = PEOPLE_GAMES_SHOWN
) -> list[dict[str, Any]]:
    """The latest games of these bot versions against people, newest first, with their seats
    (the (bot_version_id, match_id) index of ``human_seats``)."""
    if not version_ids:
        return []
    ids = (
        conn.execute(
            select(human_seats.c.match_id)
            .where(human_seats.c.bot_version_id.in_(list(version_ids)))
            .distinct()
            .order_by(human_seats.c.match_id.desc())
            .limit(limit)
        )
        .scalars()
        .all()
    )
    if not ids:
        return []
    rows = conn.execute(
        select(
            human_matches.c.id,
            human_matches.c.variant,
            human_matches.c.termination,
            human_matches.c.created_at,
        )
        .where(human_matches.c.id.in_(ids))
        .order_by(human_matches.c.id.desc())
    ).all()
    return _human_json(rows, _seats(conn, human_seats, ids))


# -- live ------------------------------------------------------------------------------------


def live(conn: Connection, league_id: int | None = None, recent: int = 10) -> dict[str, Any]:
    """What is happening now: running blocks, the progress of unfinished leagues, the latest
    finished blocks with their matches, failed blocks. Served from the (status, finished_at)
    and (league_id, status) indexes."""
    block_columns = (
        blocks.c.id,
        blocks.c.league_id,
        blocks.c.number,
        blocks.c.entrants,
        blocks.c.status,
        blocks.c.attempts,
        blocks.c.claimed_by,
        blocks.c.claimed_at,
        blocks.c.finished_at,
        blocks.c.error,
    )

    def where(query: Any) -> Any:
        return query if league_id is None else query.where(blocks.c.league_id == league_id)

    running = conn.execute(
        where(select(*block_columns).where(blocks.c.status == "running")).order_by(blocks.c.claimed_at)
    ).all()
    failed = conn.execute(
        where(select(*block_columns).where(blocks.c.status == "failed"))
        .order_by(blocks.c.finished_at.desc(), blocks.c.id.desc())
        .limit(recent)
    ).all()
    finished = conn.execute(
        where(select(*block_columns).where(blocks.c.status == "done"))
        .order_by(blocks.c.finished_at.desc())
        .limit(recent)
    ).all()
    active_ids = [
        r[0]
        for r in conn.execute(
            where(select(blocks.c.league_id).where(blocks.c.status.in_(["pending", "running", "failed"])))
            .distinct()
            .order_by(blocks.c.league_id)
        )
    ]
    wanted = sorted({*active_ids, *(r.league_id for r in finished)} | ({league_id} if league_id else set()))
    progress = _progress(conn, wanted)
    league_rows = {
        r.id: r
        for r in conn.execute(
            select(
                leagues.c.id,
                leagues.c.name,
                leagues.c.variant,
                leagues.c.format,
                leagues.c.table_size,
                leagues.c.deals,
                leagues.c.created_at,
            ).where(leagues.c.id.in_(wanted))
        )
    }
    if league_id is not None and league_id not in league_rows:
        raise NotFoundError(f"no league {league_id}")
    labels = {
        lid: {e["position"]: e["label"] for e in lineup}
        for lid, lineup in lineups(
            conn, sorted({r.league_id for r in (*running, *failed, *finished)})
        ).items()
    }
    finished_matches: dict[int, list[dict[str, Any]]] = {}
    if finished:
        match_rows = conn.execute(
            select(matches.c.id, matches.c.block_id, matches.c.rotation)
            .where(matches.c.block_id.in_([r.id for r in finished]))
            .order_by(matches.c.block_id, matches.c.rotation)
        ).all()
        seats = seats_of(conn, [m.id for m in match_rows])
        for m in match_rows:
            finished_matches.setdefault(m.block_id, []).append(
                {"id": m.id, "rotation": m.rotation, "seats": seats.get(m.id, [])}
            )

    def block_json(r: Any) -> dict[str, Any]:
        names = labels.get(r.league_id, {})
        return {
            "id": r.id,
            "league_id": r.league_id,
            "league": league_rows[r.league_id].name if r.league_id in league_rows else "?",
            "number": r.number,
            "status": r.status,
            "attempts": r.attempts,
            "entrants": [names.get(p, "?") for p in r.entrants] if names else None,
            "claimed_by": r.claimed_by,
            "claimed_at": _when(r.claimed_at),
            "finished_at": _when(r.finished_at),
            "error": r.error,
            "matches": finished_matches.get(r.id),
        }

    active = [_league_json(league_rows[i], progress.get(i, {})) for i in active_ids if i in league_rows]
    if league_id is not None and not active:
        active = [_league_json(league_rows[league_id], progress.get(league_id, {}))]
    return {
        "now": _when(dt.datetime.now(dt.UTC)),
        "league_id": league_id,
        "leagues": active,
        "running": [block_json(r) for r in running],
        "finished": [block_json(r) for r in finished],
        "failed": [block_json(r) for r in failed],
    }


def ping(conn: Connection) -> None:
    """Raise if the store cannot answer."""
    conn.execute(select(literal(1))).scalar_one()
