"""Calibrate the adaptive leagues' stopping boundary by simulation (see docs/ratings.md).

Usage: python bench/calibrate_adaptive.py [--trials N] [--factors 1,2,4] [--per-pair 1,2] [--round-min 4]

Runs adaptive leagues on the ranking bench's pool of real games (bench/bench_rank.py, tables of
4, the 8-bot ladder) for each ``LOOK_FACTOR`` and ``DEALS_PER_PAIR`` and prints how often they end
in the exact order and how many games they use, against the fixed design's games at 95%. Its
trial seeds are not the bench's, so the bench's figures check the chosen values on fresh leagues.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np

from workers.planning import adaptive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
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
    spec = importlib.util.spec_from_file_location("bench_rank", Path(__file__).with_name("bench_rank.py"))
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_rank"] = bench
    spec.loader.exec_module(bench)

    data = bench.pool(4, bench.POOL_DEALS[4])
    fixed, deals_95 = bench.games_to_95_fixed(data, 600, seed=11)
    budget = 2 * deals_95 * len(data.tables)
    print(
        f"fixed design: {fixed:.0f} games to 95% exact order ({deals_95} deals a table);"
        f" budget {budget} deals"
    )
    print(
        f"{'bound':>9} {'effect':>6} {'chain':>5} {'factor':>6} {'per pair':>8} {'exact':>6} {'games':>6}"
        f" {'ratio':>6} {'p95':>6} {'capped':>6}"
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
        print(
            f"{args.boundary:>9} {effect:>6g} {int(chain):>5} {factor:>6g} {per_pair:>8} {exact:>6.3f}"
            f" {games.mean():>6.0f} {games.mean() / fixed:>6.3f} {np.percentile(games, 95):>6.0f}"
            f" {capped:>6.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
