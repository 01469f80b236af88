"""Calibrate the adaptive leagues' stopping boundary by simulation (see docs/ratings.md).

Usage: python bench/calibrate_adaptive.py [--ladder rank|final|model] [--trials N] [--factors 1,2,4]
[--per-pair 1,2] [--round-min 4]

Runs adaptive leagues on a pool of games for each ``LOOK_FACTOR`` and ``DEALS_PER_PAIR`` and prints
how often they end in the exact order and how many games they use, against the fixed design's games
at 95% (``ratio``) and at the same exact-order rate (``same``, ``competition.final.games_ratio``'s
measure). ``--ladder rank``: the ranking bench's pool of real games (bench/bench_rank.py, tables of
4, the evenly spaced 8-bot ladder); ``final``: the competition bench's pool of real games of a
season's top 8 (bench/bench_competition.py); ``model``: that ladder as an additive normal model
(``--field``, ``--scale`` × its closest gap). Its trial seeds are not the benches', so the benches'
figures check the chosen values on fresh leagues.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from workers.planning import adaptive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ladder", default="rank", choices=["rank", "final", "model"])
    parser.add_argument("--field", type=int, default=32, help="the model's season field")
    parser.add_argument("--scale", type=float, default=1.0, help="the model's gaps × this")
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--factors", default="1")
    parser.add_argument("--per-pair", default="1,2")
    parser.add_argument("--chain", default="1", help="CHAIN_FILL values to try: 1, 0 or 0,1")
    parser.add_argument("--boundary", default="posterior", choices=["posterior", "sprt", "t"])
    parser.add_argument("--effects", default="0.1", help="EFFECT values to try (the sprt boundary's δ)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument(
        "--round-min",
        type=int,
        default=adaptive.ROUND_MIN_DEALS,
        help="ROUND_MIN_DEALS, deals a round at least",
    )
    args = parser.parse_args()
    bench = _load("bench_rank")
    final = _load("bench_competition")
    if args.ladder == "rank":
        data = bench.pool(4, bench.POOL_DEALS[4])
    elif args.ladder == "final":
        data = final.pool(final.POOL_DEALS)
    else:
        data = final.model_pool(2000, args.field, final.MODEL_CLOSEST * args.scale)
    curve = final.fixed_curve(data, 2000, 11, 0.995)
    fixed = final.games_at(curve, 0.95)
    deals_95 = math.ceil(fixed / (len(data.tables) * data.k))
    budget = 2 * deals_95 * len(data.tables)
    print(
        f"fixed design: {fixed:.0f} games to 95% exact order ({deals_95} deals a table);"
        f" budget {budget} deals"
    )
    print(
        f"{'bound':>9} {'effect':>6} {'chain':>5} {'factor':>6} {'per pair':>8} {'exact':>6} {'games':>6}"
        f" {'ratio':>6} {'same':>6} {'p95':>6} {'capped':>6}"
    )
    adaptive.BOUNDARY = args.boundary
    adaptive.ROUND_MIN_DEALS = args.round_min
    grid = itertools.product(
        [float(x) for x in args.effects.split(",")],
        [bool(int(x)) for x in args.chain.split(",")],
        [int(x) for x in args.per_pair.split(",")],
        [float(x) for x in args.factors.split(",")],
    )
    for effect, chain, per_pair, factor in grid:
        adaptive.EFFECT, adaptive.CHAIN_FILL = effect, chain
        adaptive.LOOK_FACTOR, adaptive.DEALS_PER_PAIR = factor, per_pair
        outcomes = bench.run_adaptive(data, args.confidence, budget, args.trials, seed=9)
        games = np.array([o.games for o in outcomes])
        exact = sum(o.exact for o in outcomes) / len(outcomes)
        capped = sum(o.deals >= budget for o in outcomes) / len(outcomes)
        same = games.mean() / final.games_at(final.fixed_curve(data, 2000, 11, exact, curve), exact)
        print(
            f"{args.boundary:>9} {effect:>6g} {int(chain):>5} {factor:>6g} {per_pair:>8} {exact:>6.3f}"
            f" {games.mean():>6.0f} {games.mean() / fixed:>6.3f} {same:>6.3f}"
            f" {np.percentile(games, 95):>6.0f} {capped:>6.3f}",
            flush=True,
        )
    return 0


def _load(name: str) -> Any:
    """A bench module (bench/ is not a package), registered under its name as bench/run.py loads it."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main())
