"""Ranking benchmarks on a ladder of 8 bots of known order, from real games of the real engine.

The ladder: the heuristic bot that plays a uniformly random card (and row) with probability
0, 0.1, …, 0.7 — bot 0 is the strongest, bot 7 the weakest. A pool of real one-hand classic games
is played once per table size, every table of the 8 bots, ``POOL_DEALS`` seeded deals each in
every seat rotation (cached under the temp directory, keyed by a hash of its parameters).
Seeded trial leagues then resample deals from the pool, so the pool's own figures are the truth:
its least-squares scores, its mean scores per bot, its order (checked to be the ladder's).

- ``rank.fixed.games_to_95``: games until ≥ 95% of fixed leagues (every table of 4, the same
  number of deals each) give the exact order; linear interpolation between whole deals per table.
- ``rank.adaptive.games_to_95``: mean games of adaptive leagues (``--until-confident 0.95``,
  budget 2× the fixed design's deals at 95%) — ``rank.adaptive.exact_order`` says how often they
  end in the exact order (it must be ≥ 0.95 for the figure to count), ``rank.adaptive.ratio`` is
  the first over the fixed figure (goal ≤ 0.5), ``rank.adaptive.games_p95`` the 95th percentile.
- ``rank.coverage.min``: the lowest coverage of the 95% intervals (per-bot least-squares score,
  per-bot mean score, adjacent gaps) over tables of 4, 5 and 8 and 2, 4, 8, 16 deals per table.

Thousands of trial leagues are fitted, so the fits here are a vectorised form of
:func:`workers.stats.ranking.compute`'s least squares with its jackknife over blocks; every run checks
it against ``ranking.compute`` itself (order, scores, every interval, every adjacent gap's t) on
trial leagues of each kind and stops if they differ.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from arena.tournament import Block
from bot_sdk.play import play_match
from games.classic.bots import HeuristicBot
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed
from workers.planning import adaptive
from workers.stats import ranking

N = 8
LADDER = tuple(i / 10 for i in range(N))
"""Probability of a random card (and row) per bot, best first: the known order is 0, 1, …, 7."""
CONFIG = {"hands": 1, "target": None}
POOL_SEED = 20261201
POOL_VERSION = 1
"""Bump when the pool's games change meaning (it is part of the cache key)."""
POOL_DEALS = {4: 40, 5: 20, 8: 300}
QUICK_POOL_DEALS = {4: 12, 5: 8, 8: 60}
CONFIDENCE = 0.95
HIGHER_IS_BETTER = False  # bull heads


class LadderBot(HeuristicBot):
    """The heuristic bot, except that with probability ``p`` it plays at random."""

    p = 0.0

    def choose_card(self, view: Any) -> int:
        if self.rng.random() < self.p:
            return int(view.hand[int(self.rng.random() * len(view.hand))])
        return super().choose_card(view)

    def choose_row(self, view: Any) -> int:
        if self.rng.random() < self.p:
            return int(self.rng.random() * len(view.rows))
        return super().choose_row(view)


LADDER_BOTS = [type(f"Ladder{i}", (LadderBot,), {"p": p}) for i, p in enumerate(LADDER)]


# --- the pool of real games ----------------------------------------------------------------------


class Pool:
    """Every table of ``k`` out of the 8 bots, ``deals`` deals each, every rotation played.

    ``scores[table, deal, rotation, member]``: bull heads of the table's member-th bot (its bots
    in position order).
    """

    def __init__(self, k: int, tables: list[tuple[int, ...]], scores: np.ndarray) -> None:
        self.k, self.tables, self.scores = k, tables, scores
        t, d, k = len(self.tables), self.scores.shape[1], self.k
        self.index = {table: i for i, table in enumerate(self.tables)}
        members = np.array(self.tables)
        self.members = members
        centred = self.scores - self.scores.mean(axis=3, keepdims=True)
        self.r = np.zeros((t, d, N))  # per block: Σ over rotations of match-centred scores, by bot
        self.sums = np.zeros((t, d, N))  # per block: Σ over rotations of scores, by bot
        for m in range(k):
            self.r[np.arange(t), :, members[:, m]] += centred[:, :, :, m].sum(axis=2)
            self.sums[np.arange(t), :, members[:, m]] += self.scores[:, :, :, m].sum(axis=2)
        self.total = self.scores.sum(axis=(2, 3))
        self.squares = (centred**2).sum(axis=(2, 3))  # per block: Σ of squared match-centred scores
        self.lap = np.zeros((t, N, N))  # per block: k matches of (I − J/k) on the table's bots
        for i, table in enumerate(self.tables):
            idx = np.array(table)
            self.lap[i][np.ix_(idx, idx)] = k * (np.eye(k) - 1.0 / k)
        self.member = np.zeros((t, N), dtype=bool)
        self.member[np.arange(t)[:, None], members] = True

    @property
    def deals(self) -> int:
        return int(self.scores.shape[1])

    def results(self, tables: Sequence[int], deals: Sequence[int]) -> ranking.Results:
        """The seat results of a league of blocks ``(tables[i], deals[i])``, for ``ranking.compute``."""
        rows: list[tuple[int, int, int, float]] = []
        for number, (t, d) in enumerate(zip(tables, deals, strict=True)):
            for rotation in range(self.k):
                for m, bot in enumerate(self.tables[t]):
                    rows.append((number, rotation, bot, float(self.scores[t, d, rotation, m])))
        block, rotation, position, score = (np.array(c) for c in zip(*rows, strict=True))
        zeros = np.zeros(len(rows), dtype=np.int64)
        return ranking.Results(block, rotation, position, score.astype(np.float64), zeros, zeros)


def pool(k: int, deals: int) -> Pool:
    """The pool for tables of ``k``, from the cache or played now."""
    key = json.dumps([POOL_VERSION, POOL_SEED, LADDER, CONFIG, k, deals], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / "sixnimmt-bench-rank" / f"pool-{k}-{digest}.npz"
    tables = list(itertools.combinations(range(N), k))
    if path.exists():
        return Pool(k, tables, np.load(path)["scores"])
    game = make_variant("classic", {**CONFIG, "players": k})
    scores = np.zeros((len(tables), deals, k, k))
    for t, table in enumerate(tables):
        for d in range(deals):
            seed = derive_seed(POOL_SEED, k, t, d)
            for r in range(k):
                seating = table[r:] + table[:r]
                outcome = play_match(game, [LADDER_BOTS[b] for b in seating], seed, seat_key=b"bench").outcome
                for seat, bot in enumerate(seating):
                    scores[t, d, r, table.index(bot)] = outcome.scores[seat]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, scores=scores)
    tmp.replace(path)
    return Pool(k, tables, scores)


# --- the fit, vectorised (checked against ranking.compute) ----------------------------------------

ONES = np.full((N, N), 1.0 / N)


class Fit:
    """What ``ranking.compute`` (least squares) gives, for one league."""

    def __init__(
        self, score: np.ndarray, replicates: np.ndarray | None, member: np.ndarray, sums: np.ndarray, k: int
    ) -> None:
        self.score, self.replicates, self.member, self.sums, self.k = score, replicates, member, sums, k

    @property
    def order(self) -> list[int]:
        sign = 1.0 if HIGHER_IS_BETTER else -1.0
        return sorted(range(N), key=lambda p: (-sign * self.score[p], p))

    def cov(self) -> np.ndarray:
        assert self.replicates is not None
        b = len(self.replicates)
        dev = self.replicates - self.replicates.mean(axis=0)
        return np.asarray((b - 1) / b * dev.T @ dev)

    def pairs(self, confidence: float = CONFIDENCE) -> list[ranking.PairGap]:
        """The adjacent gaps of the fitted order, as ``ranking.compute`` reports them (before Holm)."""
        cov = self.cov() if self.replicates is not None else None
        order = self.order
        sign = 1.0 if HIGHER_IS_BETTER else -1.0
        out = []
        for upper, lower in itertools.pairwise(order):
            gap = float(sign * (self.score[upper] - self.score[lower]))
            df = int(np.count_nonzero(self.member[:, upper] | self.member[:, lower])) - 1
            if cov is None or min(self.member[:, upper].sum(), self.member[:, lower].sum()) < 2:
                out.append(ranking.PairGap(upper, lower, gap, None, None, None, df, None, None, None, False))
                continue
            se = math.sqrt(max(cov[upper, upper] + cov[lower, lower] - 2 * cov[upper, lower], 0.0))
            if se == 0.0:
                z = math.inf if gap > 0 else 0.0
                out.append(ranking.PairGap(upper, lower, gap, gap, gap, 0.0, df, z, None, None, False))
                continue
            half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
            out.append(
                ranking.PairGap(
                    upper, lower, gap, gap - half, gap + half, se, df, gap / se, None, None, False
                )
            )
        return out

    def score_intervals(self, confidence: float = CONFIDENCE) -> np.ndarray:
        """(bot, 2): each bot's score interval."""
        se = np.sqrt(np.diag(self.cov()))
        df = self.member.sum(axis=0) - 1
        half = stats.t.ppf(0.5 + confidence / 2, df) * se
        return np.stack([self.score - half, self.score + half], axis=1)

    def mean_scores(self, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
        """Each bot's mean of block means, and its t interval over block means."""
        means = np.zeros(N)
        intervals = np.zeros((N, 2))
        for p in range(N):
            values = self.sums[self.member[:, p], p] / self.k
            means[p] = values.mean()
            half = (
                stats.t.ppf(0.5 + confidence / 2, len(values) - 1)
                * values.std(ddof=1)
                / math.sqrt(len(values))
            )
            intervals[p] = (means[p] - half, means[p] + half)
        return means, intervals


def fit(data: Pool, tables: np.ndarray, deals: np.ndarray, *, jackknife: bool = True) -> Fit:
    """Least squares with match effects and its jackknife over blocks, for one league."""
    lap = data.lap[tables]
    r = data.r[tables, deals]
    total_l, total_r = lap.sum(axis=0), r.sum(axis=0)
    totals = data.total[tables, deals]
    seats = data.k * data.k
    score = np.linalg.solve(total_l + ONES, total_r) + totals.sum() / (len(tables) * seats)
    replicates = None
    if jackknife and len(tables) >= 2:
        rest = np.linalg.solve(total_l[None] - lap + ONES[None], (total_r[None] - r)[..., None])[..., 0]
        replicates = rest + ((totals.sum() - totals) / ((len(tables) - 1) * seats))[:, None]
    return Fit(score, replicates, data.member[tables], data.sums[tables, deals], data.k)


def noise(data: Pool, tables: Sequence[int], deals: Sequence[int], league: Fit) -> float:
    """:func:`workers.planning.adaptive.score_noise` of a league: Σ residual² = Σ centred² − rᵀ·skill."""
    t, d = np.asarray(tables), np.asarray(deals)
    squares = float(data.squares[t, d].sum()) - float(data.r[t, d].sum(axis=0) @ league.score)
    return math.sqrt(squares / (len(tables) * data.k * (data.k - 1) - (N - 1)))


def whole(data: Pool) -> Fit:
    """The fit of the whole pool: the truth trial leagues are measured against."""
    tables = np.repeat(np.arange(len(data.tables)), data.deals)
    return fit(data, tables, np.tile(np.arange(data.deals), len(data.tables)), jackknife=False)


def check_against_compute(data: Pool, tables: Sequence[int], deals: Sequence[int]) -> None:
    """Stop the bench if the vectorised fit differs from ``ranking.compute`` on this league."""
    mine = fit(data, np.asarray(tables), np.asarray(deals))
    real = ranking.compute(
        data.results(tables, deals), N, higher_is_better=HIGHER_IS_BETTER, confidence=CONFIDENCE
    )
    rows = {row.position: row for row in real.rows}
    intervals = mine.score_intervals()
    means, mean_intervals = mine.mean_scores()

    def close(a: float | None, b: float | None) -> bool:
        if b is None:
            return a is None
        return a is not None and abs(a - b) <= 1e-6 * max(1.0, abs(b))

    problems = []
    expected_noise = adaptive.score_noise(data.results(tables, deals), real)
    if not close(expected_noise, noise(data, tables, deals, mine)):
        problems.append(f"score noise {noise(data, tables, deals, mine)} != {expected_noise}")
    ties = real.order() != mine.order
    if ties:  # only exact ties (a few blocks of one-hand games) may be ordered differently
        fitted = {row.position: row.score for row in real.rows}
        for a, b in zip(real.order(), mine.order, strict=True):
            if a != b and abs(fitted[a] - fitted[b]) > 1e-9 * max(1.0, abs(fitted[a])):
                problems.append(f"order {real.order()} != {mine.order}")
                break
    for p in range(N):
        row = rows[p]
        # The plain mean's interval is given only in a complete design (docs/ratings.md).
        shown = mean_intervals[p] if real.design == "complete" else (None, None)
        expected = (mine.score[p], *intervals[p], means[p], *shown)
        got = (row.score, row.score_low, row.score_high, row.mean_score, row.ci_low, row.ci_high)
        if not all(close(g, e) for g, e in zip(got, expected, strict=True)):
            problems.append(f"bot {p}: {got} != {expected}")
    for a, b in zip(real.pairs, [] if ties else mine.pairs(), strict=False):
        if (a.upper, a.lower, a.df) != (b.upper, b.lower, b.df) or not (
            close(a.z, b.z or 0.0) and close(a.low, b.low or 0.0) and close(a.high, b.high or 0.0)
        ):
            problems.append(f"pair {a} != {b}")
    if problems:
        raise AssertionError(
            "the bench's fit differs from workers.stats.ranking.compute: " + "; ".join(problems[:3])
        )


# --- fixed leagues ---------------------------------------------------------------------------------


def exact_rate_fixed(data: Pool, deals_per_table: int, trials: int, seed: int) -> float:
    """How often a fixed league (every table, ``deals_per_table`` deals each) gets the exact order."""
    rng = np.random.default_rng([seed, deals_per_table])
    t = len(data.tables)
    tables = np.repeat(np.arange(t), deals_per_table)
    exact = 0
    for _ in range(trials):
        deals = rng.integers(data.deals, size=len(tables))
        exact += fit(data, tables, deals, jackknife=False).order == list(range(N))
    return exact / trials


def games_to_95_fixed(data: Pool, trials: int, seed: int) -> tuple[float, int]:
    """Games (interpolated) at which the exact-order rate reaches 0.95, and the deals per table."""
    games_per_deal = len(data.tables) * data.k
    previous = 0.0
    for d in itertools.count(1):
        rate = exact_rate_fixed(data, d, trials, seed)
        if rate >= 0.95:
            fraction = (0.95 - previous) / (rate - previous) if rate > previous else 1.0
            return (d - 1 + fraction) * games_per_deal, d
        previous = rate
        if d > 60:
            raise AssertionError("the ladder is too close: no exact order at 60 deals per table")
    raise AssertionError("unreachable")


# --- adaptive leagues ------------------------------------------------------------------------------


class AdaptiveOutcome(NamedTuple):
    """How one adaptive league ended."""

    games: int
    exact: bool
    deals: int


def adaptive_league(
    data: Pool, rule: adaptive.AdaptiveRule, seed: int, check: bool = False
) -> AdaptiveOutcome:
    """One adaptive league on the pool, planned by :func:`workers.planning.adaptive.plan_next` itself."""
    rng = np.random.default_rng([seed, 7])
    planned: list[Block] = []
    tables: list[int] = []
    deals: list[int] = []
    standings: ranking.Standings | None = None
    scale: float | None = None
    while True:
        new = adaptive.plan_next(rule, N, data.k, seed, standings, planned, scale)
        if not new:
            break
        for block in new:
            planned.append(block)
            tables.append(data.index[tuple(sorted(block.entrants))])
            deals.append(int(rng.integers(data.deals)))
        if check:
            check_against_compute(data, tables, deals)
        current = fit(data, np.asarray(tables), np.asarray(deals))
        standings = ranking.Standings(
            "ls", HIGHER_IS_BETTER, rule.until_confident, [], current.pairs(), len(tables)
        )
        scale = noise(data, tables, deals, current)
    final = fit(data, np.asarray(tables), np.asarray(deals), jackknife=False)
    return AdaptiveOutcome(len(planned) * data.k, final.order == list(range(N)), len(planned))


def run_adaptive(
    data: Pool, until_confident: float, max_deals: int, trials: int, seed: int
) -> list[AdaptiveOutcome]:
    rule = adaptive.rule(until_confident, max_deals)
    return [adaptive_league(data, rule, seed * 100_003 + i, check=(i == 0)) for i in range(trials)]


# --- coverage --------------------------------------------------------------------------------------


def coverage(data: Pool, deals_per_table: int, trials: int, seed: int) -> dict[str, float]:
    """Coverage of the 95% intervals of fixed leagues against the pool's own figures."""
    everything = whole(data)
    true_score = everything.score
    true_mean = everything.mean_scores()[0]
    sign = 1.0 if HIGHER_IS_BETTER else -1.0
    rng = np.random.default_rng([seed, data.k, deals_per_table])
    tables = np.repeat(np.arange(len(data.tables)), deals_per_table)
    hits = {"score": 0, "mean": 0, "gap": 0}
    counts = {"score": 0, "mean": 0, "gap": 0}
    for trial in range(trials):
        deals = rng.integers(data.deals, size=len(tables))
        if trial == 0:
            check_against_compute(data, list(tables), list(deals))
        league = fit(data, tables, deals)
        intervals = league.score_intervals()
        hits["score"] += int(np.sum((intervals[:, 0] <= true_score) & (true_score <= intervals[:, 1])))
        _, mean_intervals = league.mean_scores()
        hits["mean"] += int(np.sum((mean_intervals[:, 0] <= true_mean) & (true_mean <= mean_intervals[:, 1])))
        counts["score"] += N
        counts["mean"] += N
        for pair in league.pairs():
            truth = sign * (true_score[pair.upper] - true_score[pair.lower])
            assert pair.low is not None and pair.high is not None
            hits["gap"] += int(pair.low <= truth <= pair.high)
            counts["gap"] += 1
    return {kind: hits[kind] / counts[kind] for kind in hits}


# --- the benchmark ---------------------------------------------------------------------------------


def run(quick: bool) -> Iterator[dict[str, Any]]:
    deals = QUICK_POOL_DEALS if quick else POOL_DEALS
    started = time.perf_counter()
    pools = {k: pool(k, deals[k]) for k in (4, 5, 8)}
    for data in pools.values():
        if whole(data).order != list(range(N)):
            raise AssertionError(f"the pool of tables of {data.k} does not keep the ladder's order")
    print(f"bench: rank pools ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    trials = 100 if quick else 600
    fixed, deals_95 = games_to_95_fixed(pools[4], trials, seed=1)
    yield {"name": "rank.fixed.games_to_95", "value": round(fixed), "unit": "games"}

    budget = 2 * deals_95 * len(pools[4].tables)
    outcomes = run_adaptive(pools[4], 0.95, budget, 60 if quick else 250, seed=2)
    games = np.array([o.games for o in outcomes])
    yield {"name": "rank.adaptive.games_to_95", "value": round(float(games.mean())), "unit": "games"}
    yield {
        "name": "rank.adaptive.exact_order",
        "value": round(sum(o.exact for o in outcomes) / len(outcomes), 4),
        "unit": "fraction",
    }
    yield {"name": "rank.adaptive.ratio", "value": round(float(games.mean()) / fixed, 3), "unit": "ratio"}
    yield {
        "name": "rank.adaptive.games_p95",
        "value": round(float(np.percentile(games, 95))),
        "unit": "games",
    }

    print(f"bench: rank leagues done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    lowest = 1.0
    for data in pools.values():
        for d in (2, 4, 8, 16):
            found = coverage(data, d, 60 if quick else 400, seed=3)
            lowest = min(lowest, *found.values())
    yield {"name": "rank.coverage.min", "value": round(lowest, 4), "unit": "fraction"}
