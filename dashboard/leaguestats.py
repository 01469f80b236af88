"""League statistics that need every stored result: ratings over time and results by opponent.

The league stores only its latest ratings, so the bot page recomputes each entrant's path the
way :func:`workers.stats.ratings.compute_ratings` does (OpenSkill Plackett–Luce over the results in
match order; a test pins the last point to the stored rating), and counts, for every pair of
entrants, the games they shared and who finished ahead.

That costs seconds on a league of 100,000 matches, so it never runs on a request's clock: a
background thread computes it, a request waits a moment for it (small leagues are done by then)
and otherwise shows the last result it has, marked as behind. A league that is still being
played is recomputed at most every :data:`REFRESH_S` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from itertools import groupby

from sqlalchemy import Engine, func, select

from workers.stats.ratings import prior_ordinal, rate_matches
from workers.store.schema import blocks, matches, seat_results

log = logging.getLogger(__name__)

POINTS = 200
"""Points kept per entrant's path: enough for a plot, bounded however long the league."""
REFRESH_S = 30.0
WAIT_S = 0.5

Path = list[tuple[int, float]]
"""``(games played, mu - 3 sigma)`` points, from the prior at 0 games."""


@dataclass(frozen=True, slots=True)
class LeagueStats:
    """A league's statistics as of ``done_blocks`` stored blocks."""

    done_blocks: int
    paths: dict[int, Path]
    """Each entrant position's rating path."""
    pairs: dict[tuple[int, int], list[int]]
    """``(a, b)`` → games together, a ahead, level, a behind, a's score sum, b's score sum."""


def compute(rows: list[tuple[int, int, int, int]], entrants: int, done_blocks: int) -> LeagueStats:
    """Statistics from ``(match_id, position, score, rank)`` rows in match order."""
    prior = prior_ordinal()
    full: dict[int, Path] = {p: [(0, prior)] for p in range(entrants)}
    games = [0] * entrants
    pairs: dict[tuple[int, int], list[int]] = {}
    matches = [list(seats) for _, seats in groupby(rows, key=lambda r: r[0])]
    ratings = rate_matches(([(s[1], s[3]) for s in seats] for seats in matches), entrants)
    for seats, players in zip(matches, ratings, strict=True):
        for _, position, score, rank in seats:
            games[position] += 1
            full[position].append((games[position], players[position].ordinal()))
            for _, other, other_score, other_rank in seats:
                if other == position:
                    continue
                cell = pairs.get((position, other))
                if cell is None:
                    cell = pairs[(position, other)] = [0, 0, 0, 0, 0, 0]
                cell[0] += 1
                cell[1 if rank < other_rank else 2 if rank == other_rank else 3] += 1
                cell[4] += score
                cell[5] += other_score
    return LeagueStats(done_blocks, {p: thin(path) for p, path in full.items()}, pairs)


def thin(path: Path, points: int = POINTS) -> Path:
    """At most ``points`` evenly spread points of a path, always with its first and last."""
    if len(path) <= points:
        return path
    step = (len(path) - 1) / (points - 1)
    return [path[round(i * step)] for i in range(points)]


def load(engine: Engine, league_id: int, entrants: int) -> LeagueStats:
    """Read the league's results (one snapshot) and compute its statistics."""
    with engine.connect() as conn:
        done = conn.execute(
            select(func.count()).where(blocks.c.league_id == league_id, blocks.c.status == "done")
        ).scalar_one()
        rows = conn.execute(
            select(
                seat_results.c.match_id, seat_results.c.position, seat_results.c.score, seat_results.c.rank
            )
            .select_from(blocks)
            .join(matches, matches.c.block_id == blocks.c.id)
            .join(seat_results, seat_results.c.match_id == matches.c.id)
            .where(blocks.c.league_id == league_id)
            .order_by(blocks.c.number, matches.c.rotation, seat_results.c.seat)
        ).all()
    return compute([tuple(r) for r in rows], entrants, int(done))


class StatsCache:
    """Each league's latest statistics, recomputed in one background thread."""

    def __init__(self, engine: Engine, wait_s: float = WAIT_S, refresh_s: float = REFRESH_S) -> None:
        self.engine = engine
        self.wait_s = wait_s
        self.refresh_s = refresh_s
        self._lock = threading.Lock()
        self._done: dict[int, tuple[LeagueStats, float]] = {}
        self._running: dict[int, Future[LeagueStats]] = {}
        self._pool: ThreadPoolExecutor | None = None

    def get(self, league_id: int, entrants: int, done_blocks: int) -> tuple[LeagueStats | None, bool]:
        """The league's statistics (None before the first computation ends) and whether they
        cover all ``done_blocks``."""
        with self._lock:
            cached = self._done.get(league_id)
            if cached is not None and cached[0].done_blocks >= done_blocks:
                return cached[0], True
            future = self._running.get(league_id)
            if future is None and (cached is None or time.monotonic() - cached[1] >= self.refresh_s):
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sixnimmt-league-stats")
                future = self._pool.submit(self._compute, league_id, entrants)
                self._running[league_id] = future
        if future is not None:
            try:
                future.result(timeout=self.wait_s)
            except FutureTimeout:
                pass  # still computing: show what there is
            except Exception:
                log.exception("computing the statistics of league %d failed", league_id)
        with self._lock:
            cached = self._done.get(league_id)
        if cached is None:
            return None, False
        return cached[0], cached[0].done_blocks >= done_blocks

    def _compute(self, league_id: int, entrants: int) -> LeagueStats:
        try:
            stats = load(self.engine, league_id, entrants)
            with self._lock:
                self._done[league_id] = (stats, time.monotonic())
            return stats
        finally:
            with self._lock:
                self._running.pop(league_id, None)

    def close(self) -> None:
        """Stop the background thread (a later request starts another)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._running.clear()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
