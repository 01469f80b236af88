"""An SPRT test's page (``sixnimmt bot test``): settings, verdict, and its LLR curve between the bounds.

The test is a league whose ``stopping`` rule has kind ``sprt``; the league page shows this instead
of a league table. The numbers come from the same pure functions the command line uses
(:mod:`workers.planning.sprt`), over the stored results of NEW's and OLD's seats.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, select

from arena.tournament import Block
from dashboard import plots, queries
from referee.rules.errors import RulesError
from referee.rules.registry import make_variant
from referee.rules.spec import game_of
from workers.planning import sprt
from workers.store.schema import blocks, leagues, matches, seat_results


def stopping_of(conn: Connection, league_id: int) -> dict[str, Any] | None:
    """The league's stopping rule if it is an SPRT test, else ``None``."""
    if not 0 < league_id <= queries.MAX_ID:
        return None  # no such league (and no id the database cannot hold)
    stopping = conn.execute(select(leagues.c.stopping).where(leagues.c.id == league_id)).scalar()
    if isinstance(stopping, dict) and stopping.get("kind") == sprt.KIND:
        return stopping
    return None


def test(conn: Connection, league_id: int, stopping: dict[str, Any]) -> dict[str, Any]:
    """What the test's page shows (its API twin returns it as JSON)."""
    info = queries.league(conn, league_id)
    settings = sprt.Settings.from_json(stopping)
    planned = conn.execute(
        select(blocks.c.number, blocks.c.entrants).where(blocks.c.league_id == league_id)
    ).all()
    plan = [Block(r.number, tuple(r.entrants), 0) for r in sorted(planned, key=lambda r: r.number)]
    results = conn.execute(
        select(blocks.c.number.label("block"), seat_results.c.position, seat_results.c.score)
        .join(matches, matches.c.block_id == blocks.c.id)
        .join(seat_results, seat_results.c.match_id == matches.c.id)
        .where(
            blocks.c.league_id == league_id,
            seat_results.c.position.in_([settings.new, settings.base]),
        )
    ).all()
    try:
        higher_is_better = make_variant(info["variant"], info["config"]).higher_is_better
    except RulesError:
        higher_is_better = False
    rows = ({"block": r.block, "position": r.position, "score": r.score} for r in results)
    differences = sprt.paired_differences(rows, plan, settings, higher_is_better=higher_is_better)
    state = sprt.state(differences, settings)
    by_position = {e["position"]: e for e in info["entrants"]}
    field = [by_position[p] for p in sprt.field_of(len(info["entrants"]), settings) if p in by_position]
    game = game_of(info["variant"])
    unit = game.score_unit if game is not None else "points"
    new, base = by_position.get(settings.new), by_position.get(settings.base)
    label = {p: e["label"] for p, e in by_position.items()}
    words = sprt.verdict_text(
        state.verdict,
        label.get(settings.new, "NEW"),
        label.get(settings.base, "OLD"),
        f"{settings.margin:g} {unit} per game",
        state.deals,
    )
    return {
        "league": info,
        "test": {
            **state.to_json(),
            "settings": settings.to_json(),
            "new": new,
            "base": base,
            "field": field,
            "unit": unit,
            "higher_is_better": higher_is_better,
            "games": 2 * state.deals * info["table_size"],
            "deals_planned": len(plan) // 2,
            "verdict_text": words,
        },
        "_plot": llr_plot(state, max(len(plan) // 2, 1)),
    }


def llr_plot(state: sprt.State, deals_planned: int) -> dict[str, Any] | None:
    """The LLR after each deal from 0, with the two bounds as lines across the planned deals."""
    width = max(state.deals, deals_planned, 1)
    path = [(0.0, 0.0), *((float(n), value) for n, value in enumerate(state.path, 1))]
    return plots.line_plot(
        [
            ("LLR", path),
            ("accept H1", [(0.0, state.upper), (float(width), state.upper)]),
            ("accept H0", [(0.0, state.lower), (float(width), state.lower)]),
        ]
    )


def league_test(engine: Engine, league_id: int, recent: int = 10) -> dict[str, Any] | None:
    """The league page of an SPRT test, read through one connection; ``None`` for other leagues."""
    with engine.connect() as conn:
        stopping = stopping_of(conn, league_id)
        if stopping is None:
            return None
        shown = test(conn, league_id, stopping)
        latest, _ = queries.league_matches(conn, shown["league"], 1, recent)
    return shown | {"latest_matches": latest}
