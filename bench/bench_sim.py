"""The classic batch simulator (games/classic/sim): hands per second on one core.

Random play of single four-player (and ten-player) hands, batches of 20,000 games, after one
warm-up batch (the numba compile, or its load from the cache, is not counted). Time is the
process's CPU time, so the figure is per core whatever else the machine runs; best of three.
``sim.classic.p4.engine_ratio`` divides it by the engine's random play measured in the same run
the same way (``bench_engine``'s loop, CPU time).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def sim_hands_per_s(players: int, games: int, repeats: int, policy: Any = "random") -> float:
    from games.classic.sim import Simulator

    sim = Simulator({"players": players, "hands": 1, "target": None})
    sim.play(sim.new_games(100), policy, seed=0)  # compile or load the kernel
    best = 0.0
    for seed in range(repeats):
        batch = sim.new_games(games)
        start = time.process_time()
        sim.play(batch, policy, seed=seed + 1)
        best = max(best, games / (time.process_time() - start))
    return best


def engine_hands_per_s(players: int, seconds: float) -> float:
    path = Path(__file__).with_name("bench_engine.py")
    spec = importlib.util.spec_from_file_location("bench_engine", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    original = module.time.perf_counter
    module.time.perf_counter = time.process_time  # the same loop, on CPU time
    try:
        return float(module.engine_hands_per_s(players, seconds))
    finally:
        module.time.perf_counter = original


def _lowest(batch: Any, games: Any, seat: int) -> Any:
    """A Python policy: each game's lowest card (one numpy call per turn for the whole batch)."""
    return batch.hands[games, seat, 0]


def run(quick: bool) -> Iterator[dict[str, Any]]:
    games = 2_000 if quick else 20_000
    repeats = 1 if quick else 3
    p4 = sim_hands_per_s(4, games, repeats)
    yield {"name": "sim.classic.p4.hands_per_s", "value": round(p4), "unit": "hands/s"}
    p10 = sim_hands_per_s(10, games, repeats)
    yield {"name": "sim.classic.p10.hands_per_s", "value": round(p10), "unit": "hands/s"}
    policy = [_lowest, "random", "random", "random"]
    callable_p4 = sim_hands_per_s(4, games, repeats, policy)
    yield {"name": "sim.classic.p4.callable.hands_per_s", "value": round(callable_p4), "unit": "hands/s"}
    engine = engine_hands_per_s(4, 0.3 if quick else 2.0)
    yield {"name": "sim.classic.p4.engine_ratio", "value": round(p4 / engine, 1), "unit": "ratio"}
