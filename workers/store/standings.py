"""The stored league table: derived data, kept current by whoever stores a league's results.

The ``ratings`` table holds one table per league, the headline fit (:data:`HEADLINE`, the least
squares batch fit at :data:`CONFIDENCE`) of every stored result. It is written here and nowhere
else, by the code paths that store results:

- :func:`results_stored`, right after a block's results are stored (:mod:`workers.play.execute`,
  for the Celery workers and the local pool alike), recomputes it when it has fallen behind:
  always while it covers less than 20 blocks' worth of results, then once the results it lacks
  are a twentieth (:data:`STALE_PARTS`) of those stored, and always when no block of the league
  is left to play (a round's or the league's last block); but a process looks at most once every
  ``SIXNIMMT_STANDINGS_EVERY_S`` (10 s) per league between a round's ends, so that a fit and its
  queries are not paid by every block of a league that plays many of them a second;
- and again at a round's end (:func:`workers.league.plan_next_round`, which the
  reconciliation, the worker that stored the round's last block and the local pool all call),
  where no block is left to play, so it is brought up to date if any result is missing from
  it: the backstop for a worker that died between storing a block and recomputing.

:func:`refresh` recomputes it on demand (``force``: whatever the stored one covers).

A read never writes: :func:`compute` fits any method and confidence for display and stores
nothing, so ``league standings --method pl`` cannot replace the headline table.

One process looks at a league's table at a time (PostgreSQL: a transaction-scoped advisory lock on
the league, :func:`refit_turn`, held while it counts what the table covers and refits it). After a
block, a process that finds another one looking skips its look (that one is bringing the table up
to date); at a round's end it waits its turn and then looks, so the table is complete when a round
or the league is. Without it every worker process that stored a block refitted the same league's
table at once, the largest share of a busy store's time (docs/capacity.md). SQLite has no such
lock and needs none for correctness: two writers may still recompute at once there, and each
stores its table only if it covers at least as many seat results as the stored one (the league's
row locked while it compares), so an older fit never replaces a newer one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, func, insert, select

from referee.rules.registry import make_variant
from referee.settings import load as load_settings
from workers.stats import ranking, ratings
from workers.store import repo
from workers.store.schema import blocks, leagues, matches, seat_results
from workers.store.schema import ratings as ratings_table

log = logging.getLogger(__name__)

HEADLINE = "ls"
"""The method of the stored table (and the dashboard's): the least squares batch fit."""
CONFIDENCE = 0.95
"""The confidence of the stored table's intervals and "told apart" marks."""
STALE_PARTS = 20
"""After a block, the table is recomputed once the results it lacks are 1/STALE_PARTS of those stored."""
REFIT_LOCK = 0x5E7A_7AB1
"""The first key of the advisory lock a process holds while it looks at a league's table (the
second is the league's id): PostgreSQL's two-key advisory locks, a namespace of their own."""


def compute(
    engine: Engine, league: repo.League, *, method: str = HEADLINE, confidence: float = CONFIDENCE
) -> tuple[list[dict[str, Any]], ranking.Standings]:
    """The league table fitted from every stored result, best first; stores nothing."""
    results = repo.league_results(engine, league.id)
    variant = make_variant(league.variant, league.config)
    return ratings.compute_ratings(
        results,
        len(league.entrants),
        higher_is_better=variant.higher_is_better,
        method=method,
        confidence=confidence,
        lowest=variant.lowest_score,
    )


def coverage(engine: Engine, league_id: int) -> dict[str, Any]:
    """How current the stored table is: seat results stored and covered by the table, the
    table's method, and the blocks not yet stored."""
    with engine.connect() as conn:
        stored = conn.execute(
            select(func.count())
            .select_from(seat_results)
            .join(matches, matches.c.id == seat_results.c.match_id)
            .join(blocks, blocks.c.id == matches.c.block_id)
            .where(blocks.c.league_id == league_id)
        ).scalar()
        covered, methods = conn.execute(
            select(func.coalesce(func.sum(ratings_table.c.games), 0), func.max(ratings_table.c.method)).where(
                ratings_table.c.league_id == league_id
            )
        ).one()
        left = conn.execute(
            select(func.count()).where(blocks.c.league_id == league_id, blocks.c.status != "done")
        ).scalar()
    return {
        "results": int(stored or 0),
        "covered": int(covered or 0),
        "method": methods,
        "left": int(left or 0),
    }


def refresh(engine: Engine, league: repo.League, *, force: bool = False) -> bool:
    """Recompute and store the headline table if any stored result is missing from it (or
    ``force``); returns whether a table was stored."""
    if not force:
        seen = coverage(engine, league.id)
        if seen["method"] == HEADLINE and seen["covered"] >= seen["results"]:
            return False
    league = repo.league_by_id(engine, league.id)  # a ladder's entrants change as it runs
    rows, _ = compute(engine, league)
    return _store(engine, league.id, rows)


_looked: dict[tuple[str, int], float] = {}
"""When this process last looked at a league's table after a block (monotonic seconds)."""


def block_stored(engine: Engine, league_id: int, *, every_s: float | None = None) -> bool:
    """After one block of the league is stored: :func:`results_stored`, unless this process
    looked at the league's table less than ``every_s`` (``SIXNIMMT_STANDINGS_EVERY_S``) ago. A
    round's end (:func:`workers.league.plan_next_round`) calls :func:`results_stored` itself, so
    the table is complete when a round or the league is."""
    if every_s is None:
        every_s = load_settings().standings_every_s
    key = (engine.url.render_as_string(hide_password=True), league_id)
    now = time.monotonic()
    if now - _looked.get(key, -math.inf) < every_s:
        return False
    _looked[key] = now
    return results_stored(engine, league_id, wait=False)


def results_stored(engine: Engine, league_id: int, *, wait: bool = True) -> bool:
    """After results of the league are stored (a block, or at a round's end): recompute the
    table if it has fallen behind (see the module docstring), in this process's turn
    (:func:`refit_turn`): ``wait`` for it (a round's end), or skip if another process is
    looking at the league's table now (after a block). Never raises: the results are stored
    whatever happens here, and the next block or round's end recomputes. Returns whether a
    table was stored."""
    try:
        with refit_turn(engine, league_id, wait=wait) as turn:
            if not turn:
                return False
            seen = coverage(engine, league_id)
            behind = seen["results"] - seen["covered"]
            if not seen["results"] or (seen["method"] == HEADLINE and behind <= 0):
                return False
            stale = seen["method"] != HEADLINE or seen["left"] == 0 or behind * STALE_PARTS >= seen["results"]
            if not stale:
                return False
            return refresh(engine, repo.league_by_id(engine, league_id), force=True)
    except Exception:
        log.exception("the standings of league %s were not recomputed", league_id)
        return False


@contextmanager
def refit_turn(engine: Engine, league_id: int, *, wait: bool) -> Iterator[bool]:
    """Whether this process may look at the league's table now, held until the block ends.

    On PostgreSQL a transaction-scoped advisory lock on (:data:`REFIT_LOCK`, the league) taken on
    a connection of its own and held while the caller counts and refits: one process at a time
    per league across every worker. ``wait``: wait for it (``True``); else ``False`` at once if
    another process holds it. Transaction-scoped, so it works behind PgBouncer's transaction
    pooling and goes with the connection if the process dies. SQLite: always ``True`` (no
    such lock; its writers already take turns, and :func:`_store` keeps the newer table)."""
    if engine.dialect.name != "postgresql":
        yield True
        return
    with engine.begin() as conn:
        if wait:
            conn.execute(select(func.pg_advisory_xact_lock(REFIT_LOCK, league_id)))
            yield True
        else:
            yield bool(conn.execute(select(func.pg_try_advisory_xact_lock(REFIT_LOCK, league_id))).scalar())


def _store(engine: Engine, league_id: int, rows: list[dict[str, Any]]) -> bool:
    """Replace the league's table with ``rows`` unless the stored one covers more results."""
    covers = sum(int(row["games"]) for row in rows)
    with engine.begin() as conn:
        # Writers of one league's table take turns (SQLite: the write lock taken at BEGIN).
        conn.execute(select(leagues.c.id).where(leagues.c.id == league_id).with_for_update()).all()
        covered, method = conn.execute(
            select(func.coalesce(func.sum(ratings_table.c.games), 0), func.max(ratings_table.c.method)).where(
                ratings_table.c.league_id == league_id
            )
        ).one()
        if method == HEADLINE and int(covered or 0) > covers:
            return False
        conn.execute(ratings_table.delete().where(ratings_table.c.league_id == league_id))
        if rows:
            conn.execute(insert(ratings_table), [{"league_id": league_id, **row} for row in rows])
    return True
