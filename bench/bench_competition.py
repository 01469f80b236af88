"""A competition's final phase: an adaptive league among the season's top 8 against a fixed round-robin.

The final of a competition (``--final-top 8 --final-until-confident 0.95``) is an adaptive
league (:mod:`workers.planning.adaptive`) among the season's top bots. The top of a season's
ladder is not spread like a random field: its best bot stands apart, the rest are bunched. The
bench's ladder is the rank bench's bot (bench/bench_rank.py: the heuristic bot playing a random
card and row with probability p) at eight values of p spaced like the top 8 of a season:

- the season's field is ``FIELD`` bots whose skills are drawn from a normal distribution; the
  final's 8 are its top 8, at the expected order statistics (Blom's approximation
  Φ⁻¹((i − 0.375) / (n + 0.25))): gaps 4.1, 2.4, 1.8, 1.4, 1.2, 1.1, 1 times the closest;
- p = 0 for the best bot and ``P_CLOSEST`` for the closest gap: p = 0, 0.29, 0.45, 0.57, 0.67,
  0.76, 0.83, 0.90 (the rank bench's ladder: 0, 0.1, …, 0.7, evenly spaced).

A pool of real one-hand classic games of that ladder (every table of 4, ``POOL_DEALS`` deals each,
every seat rotation; cached under the temp directory like the rank bench's) is resampled by seeded
leagues with the rank bench's fits (vectorised least squares and jackknife, checked against
:func:`workers.stats.ranking.compute` in every run); the pool's own order is the truth and is
checked to be the ladder's:

- ``competition.final.games``: mean games of adaptive finals at C = 0.95 (budget 2 × the fixed
  design's deals at 95%), planned by :func:`workers.planning.adaptive.plan_next` itself;
- ``competition.final.exact_order``: how often they end in the exact order (C or more for the
  figure to count);
- ``competition.final.games_ratio``: ``competition.final.games`` over the games a fixed round-robin
  (every table, D deals each) needs for the same exact-order rate, interpolated linearly between
  whole D (goal ≤ 0.6).

:func:`model_pool` is the same ladder as an additive normal model (skill plus noise), for
bench/calibrate_adaptive.py's check that the figure does not hang on one field size or scale.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bot_sdk.play import play_match
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed


def _bench_rank() -> Any:
    """bench/bench_rank.py, loaded as bench/run.py loads the benches (they are not a package)."""
    if "bench_rank" in sys.modules:
        return sys.modules["bench_rank"]
    spec = importlib.util.spec_from_file_location("bench_rank", Path(__file__).with_name("bench_rank.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_rank"] = module
    spec.loader.exec_module(module)
    return module


rank = _bench_rank()

TOP = rank.N
"""The final's bots (8: the rank bench's vectorised fit is written for eight)."""
TABLE = 4
FIELD = 32
"""The season's field the final's bots are the top of."""
P_CLOSEST = 0.07
"""The random-card probability between the final's two closest bots."""
CONFIDENCE = 0.95
POOL_DEALS = 40
QUICK_POOL_DEALS = 12
POOL_SEED = 20261204
POOL_VERSION = 1
"""Bump when the pool's games change meaning (it is part of the cache key)."""

MODEL_CLOSEST = 1.09 / 9.5
"""The model's closest gap in units of a game's noise: the rank bench's closest gap over its noise
around the fit (1.09 bull heads over 9.5)."""
DUPLICATE = 0.12
"""The share of the model's noise variance that comes with the seat's hand (cancelled by a deal's
rotations; real games cancel 8–16%)."""


def shape(field: int = FIELD) -> np.ndarray:
    """The expected skills of the top ``TOP`` of a normal field, best first, from 0, the closest gap 1."""
    ranks = np.arange(1, TOP + 1)
    normal = statistics.NormalDist()
    z = np.array([normal.inv_cdf(1 - (i - 0.375) / (field + 0.25)) for i in ranks])  # the best first
    return np.asarray((z[0] - z) / (-np.diff(z)).min())


LADDER = tuple(round(float(p), 4) for p in shape() * P_CLOSEST)
"""The final's ladder: each bot's probability of a random card (and row), best first."""
BOTS = [type(f"Final{i}", (rank.LadderBot,), {"p": p}) for i, p in enumerate(LADDER)]


def pool(deals: int) -> Any:
    """The pool of real games of the final's ladder (a ``bench_rank.Pool``), from the cache or played now."""
    key = json.dumps([POOL_VERSION, POOL_SEED, LADDER, rank.CONFIG, TABLE, deals], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / "sixnimmt-bench-competition" / f"pool-{digest}.npz"
    tables = list(itertools.combinations(range(TOP), TABLE))
    if path.exists():
        return rank.Pool(TABLE, tables, np.load(path)["scores"])
    game = make_variant("classic", {**rank.CONFIG, "players": TABLE})
    scores = np.zeros((len(tables), deals, TABLE, TABLE))
    for t, table in enumerate(tables):
        for d in range(deals):
            seed = derive_seed(POOL_SEED, TABLE, t, d)
            for r in range(TABLE):
                seating = table[r:] + table[:r]
                outcome = play_match(game, [BOTS[b] for b in seating], seed, seat_key=b"bench").outcome
                for seat, bot in enumerate(seating):
                    scores[t, d, r, table.index(bot)] = outcome.scores[seat]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, scores=scores)
    tmp.replace(path)
    return rank.Pool(TABLE, tables, scores)


def model_pool(deals: int, field: int = FIELD, closest: float = MODEL_CLOSEST, seed: int = POOL_SEED) -> Any:
    """The same ladder as a model: skill (``shape`` × ``closest``) plus normal noise of variance 1,
    every table of 4, ``deals`` deals each, every rotation: a ``bench_rank.Pool``."""
    skill = shape(field) * closest
    tables = list(itertools.combinations(range(TOP), TABLE))
    rng = np.random.default_rng(seed)
    members = np.array(tables)  # (table, member)
    # The seat's hand: member m sits in seat (m − r) mod k in rotation r (bench_rank's seatings).
    hand = rng.standard_normal((len(tables), deals, TABLE))
    seat = (np.arange(TABLE)[None, :] - np.arange(TABLE)[:, None]) % TABLE  # (rotation, member)
    own = rng.standard_normal((len(tables), deals, TABLE, TABLE))
    noise = math.sqrt(DUPLICATE) * hand[:, :, seat] + math.sqrt(1 - DUPLICATE) * own
    return rank.Pool(TABLE, tables, skill[members][:, None, None, :] + noise)


def fixed_curve(
    data: Any, trials: int, seed: int, until: float, curve: list[tuple[float, float]] | None = None
) -> list[tuple[float, float]]:
    """(games, exact-order rate) of fixed round-robins of 1, 2, … deals a table until the rate
    reaches ``until``, extending ``curve`` (computed with the same trials and seed) if given."""
    games_per_deal = len(data.tables) * data.k
    curve = list(curve or [(0.0, 0.0)])
    for d in range(len(curve), 200):
        if curve[-1][1] >= until:
            return curve
        curve.append((float(d * games_per_deal), rank.exact_rate_fixed(data, d, trials, seed)))
    raise AssertionError("the ladder is too close: no exact order at 200 deals a table")


def games_at(curve: list[tuple[float, float]], rate: float) -> float:
    """The fixed design's games at exact-order ``rate``: linear between the whole deals that straddle
    its first crossing (as ``rank.fixed.games_to_95``)."""
    for (g0, r0), (g1, r1) in itertools.pairwise(curve):
        if r1 >= rate:
            return g1 if r1 <= r0 else g0 + (g1 - g0) * (rate - r0) / (r1 - r0)
    raise ValueError(f"the curve never reaches {rate}")


def measure(
    data: Any, *, fixed_trials: int, final_trials: int, seed: int, confidence: float = CONFIDENCE
) -> dict[str, float]:
    """The figures of one run: the final's games, exact-order rate and ratio, and the fixed design's."""
    curve = fixed_curve(data, fixed_trials, seed, 0.95)
    at_95 = games_at(curve, 0.95)
    deals_95 = math.ceil(at_95 / (len(data.tables) * data.k))
    budget = 2 * deals_95 * len(data.tables)
    outcomes = rank.run_adaptive(data, confidence, budget, final_trials, seed=seed + 1)
    games = np.array([o.games for o in outcomes], dtype=float)
    exact = sum(o.exact for o in outcomes) / len(outcomes)
    fixed = games_at(fixed_curve(data, fixed_trials, seed, exact, curve), exact)
    return {
        "games": float(games.mean()),
        "exact": exact,
        "ratio": float(games.mean()) / fixed,
        "fixed": fixed,
        "fixed_95": at_95,
        "p95": float(np.percentile(games, 95)),
        "capped": sum(o.deals >= budget for o in outcomes) / len(outcomes),
    }


def run(quick: bool) -> Iterator[dict[str, Any]]:
    started = time.perf_counter()
    data = pool(QUICK_POOL_DEALS if quick else POOL_DEALS)
    if rank.whole(data).order != list(range(TOP)):
        raise AssertionError("the pool of the final's ladder does not keep the ladder's order")
    print(f"bench: competition pool ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    found = measure(
        data, fixed_trials=100 if quick else 3000, final_trials=30 if quick else 800, seed=41 if quick else 43
    )
    print(
        f"bench: competition final {found['games']:.0f} games at {found['exact']:.3f} exact order;"
        f" fixed {found['fixed']:.0f} at that rate, {found['fixed_95']:.0f} at 0.95; p95"
        f" {found['p95']:.0f}, capped {found['capped']:.3f}; {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    yield {"name": "competition.final.games_ratio", "value": round(found["ratio"], 3), "unit": "ratio"}
    yield {"name": "competition.final.exact_order", "value": round(found["exact"], 4), "unit": "fraction"}
    yield {"name": "competition.final.games", "value": round(found["games"]), "unit": "games"}
