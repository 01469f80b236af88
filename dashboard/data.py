"""What each page shows, assembled from the store: the pages render it, the API returns it as JSON.

One function per page, each reading through one connection (one snapshot) of the store.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from dashboard import plots, queries
from dashboard.access import ANONYMOUS, Viewer, redact
from dashboard.leaguestats import StatsCache
from dashboard.replay import Replay, load
from referee.rules.errors import RulesError
from referee.rules.registry import make_variant
from workers.store import repo
from workers.store.repo import NotFoundError

PLOTTED_LEAGUES = 6
"""Leagues drawn in a bot's rating plot: its newest ones."""
CACHED_REPLAYS = 64


class ReplayCache:
    """The latest replays by match id: a stored match never changes, and its viewer asks again
    for every step."""

    def __init__(self, size: int = CACHED_REPLAYS) -> None:
        self.size = size
        self._replays: OrderedDict[Hashable, Replay] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: Hashable) -> Replay | None:
        with self._lock:
            replay = self._replays.get(match_id)
            if replay is not None:
                self._replays.move_to_end(match_id)
            return replay

    def put(self, match_id: Hashable, replay: Replay) -> None:
        with self._lock:
            self._replays[match_id] = replay
            while len(self._replays) > self.size:
                self._replays.popitem(last=False)


@dataclass
class Store:
    """The store the dashboard reads, with what it keeps between requests."""

    engine: Engine
    stats: StatsCache = field(init=False)
    replays: ReplayCache = field(default_factory=ReplayCache)

    def __post_init__(self) -> None:
        self.stats = StatsCache(self.engine)

    def close(self) -> None:
        self.stats.close()


def _higher_is_better(variant: str, config: dict[str, Any]) -> bool | None:
    try:
        return make_variant(variant, config).higher_is_better
    except RulesError:
        return None


def leagues(store: Store) -> dict[str, Any]:
    with store.engine.connect() as conn:
        return {"leagues": queries.list_leagues(conn)}


def league(store: Store, league_id: int, recent: int = 10) -> dict[str, Any]:
    with store.engine.connect() as conn:
        info = queries.league(conn, league_id)
        table = queries.standings(conn, info)
        latest, _ = queries.league_matches(conn, info, 1, recent)
    return {
        "league": info,
        "standings": table,
        "higher_is_better": _higher_is_better(info["variant"], info["config"]),
        "latest_matches": latest,
    }


def league_matches(store: Store, league_id: int, page: int, size: int) -> dict[str, Any]:
    with store.engine.connect() as conn:
        info = queries.league(conn, league_id)
        rows, paging = queries.league_matches(conn, info, page, size)
    return {"league": info, "matches": rows, "page": paging.to_json()}


def bots(store: Store) -> dict[str, Any]:
    with store.engine.connect() as conn:
        return {"bots": queries.list_bots(conn)}


def bot(store: Store, bot_id: int) -> dict[str, Any]:
    """A bot's versions, leagues with ratings, results by opponent, and ratings over time."""
    with store.engine.connect() as conn:
        info = queries.bot(conn, bot_id)
        entries = queries.bot_leagues(conn, [v["id"] for v in info["versions"]])
        lineups = queries.lineups(conn, sorted({e["league_id"] for e in entries}))
        people = queries.against_people(conn, info["versions"])
        people_games = queries.people_games(conn, [v["id"] for v in info["versions"]])
    complete = True
    stats = {}
    for entry in entries:
        league_id = entry["league_id"]
        if entry["done_blocks"] and league_id not in stats:
            found, fresh = store.stats.get(league_id, len(lineups[league_id]), entry["done_blocks"])
            complete = complete and fresh
            if found is not None:
                stats[league_id] = found
    histories = []
    for entry in entries[:PLOTTED_LEAGUES]:
        found = stats.get(entry["league_id"])
        points = found.paths.get(entry["position"], []) if found else []
        if len(points) > 1:
            histories.append(
                {
                    "league_id": entry["league_id"],
                    "league": entry["league"],
                    "version": entry["version"],
                    "points": [[games, rating] for games, rating in points],
                }
            )
    return {
        "bot": info,
        "leagues": entries,
        "opponents": _opponents(entries, stats, lineups),
        "rating_history": histories,
        "complete": complete,
        "against_people": people,
        "people_games": people_games,
    }


def _opponents(
    entries: list[dict[str, Any]], stats: dict[int, Any], lineups: dict[int, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Results against each opponent version, summed over the bot's leagues."""
    totals: dict[int, list[int]] = {}
    names: dict[int, dict[str, Any]] = {}
    for entry in entries:
        found = stats.get(entry["league_id"])
        if found is None:
            continue
        lineup = lineups[entry["league_id"]]
        for (position, other), cell in found.pairs.items():
            if position != entry["position"]:
                continue
            opponent = lineup[other]
            names[opponent["bot_version_id"]] = opponent
            total = totals.setdefault(opponent["bot_version_id"], [0] * len(cell))
            for i, value in enumerate(cell):
                total[i] += value
    rows = [
        {
            **{k: names[version][k] for k in ("bot_version_id", "bot_id", "bot", "version", "label")},
            "games": games,
            "ahead": ahead,
            "level": level,
            "behind": behind,
            "my_score": mine / games,
            "their_score": theirs / games,
        }
        for version, (games, ahead, level, behind, mine, theirs) in totals.items()
        if games
    ]
    rows.sort(key=lambda r: (-r["games"], r["label"]))
    return rows


def rating_plot(view: dict[str, Any]) -> dict[str, Any] | None:
    """The geometry of a bot's rating plot (one line per league entry)."""
    return plots.line_plot(
        [
            (f"{h['league']} (v{h['version']})", [(x, y) for x, y in h["points"]])
            for h in view["rating_history"]
        ]
    )


def bot_matches(store: Store, bot_id: int, version: int | None, page: int, size: int) -> dict[str, Any]:
    with store.engine.connect() as conn:
        info = queries.bot(conn, bot_id)
        if not info["versions"]:
            raise NotFoundError(f"bot {bot_id} has no versions")
        chosen = (
            info["versions"][0]
            if version is None
            else next((v for v in info["versions"] if v["version"] == version), None)
        )
        if chosen is None:
            raise NotFoundError(f"bot {bot_id} has no version {version}")
        rows, paging = queries.version_matches(conn, chosen["id"], page, size)
    return {"bot": info, "version": chosen, "matches": rows, "page": paging.to_json()}


def match(store: Store, match_id: int, viewer: Viewer = ANONYMOUS) -> tuple[dict[str, Any], Replay]:
    """A match's summary (with its seats' names in seat order) and its replay; each seat's fault
    details only where ``viewer`` may read them (:func:`dashboard.access.redact`)."""
    with store.engine.connect() as conn:
        info = queries.match(conn, match_id)
        replay = store.replays.get(match_id)
        body = None if replay is not None else queries.transcript_body(conn, match_id)
    info["seats"] = redact(info["seats"], viewer)
    if replay is None:
        assert body is not None
        replay = load(body)
        store.replays.put(match_id, replay)
    return _named(info, replay), replay


def _named(info: dict[str, Any], replay: Replay) -> dict[str, Any]:
    """A match's summary with its seats' names in seat order, its variant and steps from ``replay``."""
    names = {s["seat"]: s["label"] for s in info["seats"]}
    info["names"] = [names.get(seat, f"seat {seat}") for seat in range(replay.players)]
    info["variant"] = replay.variant.name  # the transcript's own, which the replay follows
    info["steps"] = replay.steps
    return info


def transcript(store: Store, match_id: int) -> str:
    with store.engine.connect() as conn:
        queries.match(conn, match_id)
        return queries.transcript_body(conn, match_id)


def human_match(store: Store, match_id: int, viewer: Viewer = ANONYMOUS) -> tuple[dict[str, Any], Replay]:
    """A game against a person: as :func:`match`, from the tables of games against people."""
    with store.engine.connect() as conn:
        info = queries.human_match(conn, match_id)
        replay = store.replays.get(("people", match_id))
        body = None if replay is not None else queries.human_transcript_body(conn, match_id)
    info["seats"] = redact(info["seats"], viewer)
    if replay is None:
        assert body is not None
        replay = load(body)
        store.replays.put(("people", match_id), replay)
    return _named(info, replay), replay


def human_transcript(store: Store, match_id: int) -> str:
    with store.engine.connect() as conn:
        queries.human_match(conn, match_id)
        return queries.human_transcript_body(conn, match_id)


def playable(store: Store) -> list[dict[str, Any]]:
    """The bot versions a person may sit down against (not retired), as the Play page lists them."""
    return [
        {
            "id": v.id,
            "bot": v.bot,
            "version": v.version,
            "variant": v.variant,
            "label": f"{v.bot}@{v.version}",
        }
        for v in repo.playable_versions(store.engine)
    ]


def live(store: Store, league_id: int | None, viewer: Viewer = ANONYMOUS) -> dict[str, Any]:
    """The live view; blocks' errors only for a viewer who may read them (else ``None``, with
    ``error_hidden`` saying there was one)."""
    with store.engine.connect() as conn:
        shown = queries.live(conn, league_id)
    if not viewer.may_read_errors():
        for block in (*shown["running"], *shown["finished"], *shown["failed"]):
            block["error_hidden"] = block["error"] is not None
            block["error"] = None
    return shown


def healthy(store: Store) -> None:
    with store.engine.connect() as conn:
        queries.ping(conn)
