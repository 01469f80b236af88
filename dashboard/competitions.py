"""The dashboard's public competition pages (``/competitions``, ``/competitions/{name}``): each
competition's settings and state, the standings of its season and of its final with their
intervals, rank intervals and "can't tell apart", its latest matches with their replays, and each
bot's history page. Read only, and public: the tables name versions and their accounts' display
names (:func:`workers.store.repo.competition`), never a log, stderr or code.

Pure of Starlette: :mod:`dashboard.app` serves it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from dashboard import data
from workers.store import repo
from workers.store.schema import bots

RECENT = 10
"""Matches listed on a competition's page (the league's pages list them all)."""


def competitions(store: data.Store) -> dict[str, Any]:
    """Every competition, newest first: its settings, state and number of entered accounts."""
    return {"competitions": repo.list_competitions(store.engine)}


def competition(store: data.Store, name: str, recent: int = RECENT) -> dict[str, Any]:
    """A competition's public page: its settings and state, the season's and the final's tables
    (``None`` for a phase not begun) with each row's bot id (its history page) and the league's
    id, and the latest matches of the phase playing (the final once it began)."""
    found = repo.find_competition(store.engine, name)
    shown = repo.competition(store.engine, name)
    names = {
        row["bot"].rpartition("@")[0]
        for phase in ("season", "final")
        if shown[phase]
        for row in shown[phase]["standings"]
    }
    with store.engine.connect() as conn:
        ids = dict(conn.execute(select(bots.c.name, bots.c.id).where(bots.c.name.in_(names))).all())
    for phase, league_id in (("season", found.season_league_id), ("final", found.final_league_id)):
        if shown[phase]:
            shown[phase]["league_id"] = league_id
            for row in shown[phase]["standings"]:
                row["bot_id"] = ids.get(row["bot"].rpartition("@")[0])
    playing = found.final_league_id or found.season_league_id
    latest: list[dict[str, Any]] = []
    if playing is not None:
        latest = data.league_matches(store, playing, 1, recent)["matches"]
    return {"competition": shown, "latest_matches": latest, "latest_league_id": playing}
