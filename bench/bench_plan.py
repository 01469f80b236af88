"""Planning leagues of many bots: the sampled design and the store side of a league of 1,000 entrants.

- ``plan.sampled.1000.s``: planning a sampled league of 1,000 bots at tables of 4, every bot at
  ``PER_BOT`` tables (:func:`workers.planning.formats.plan_sampled`: 3,000 tables, one deal each); best of
  three (goal ≤ 5 s);
- ``plan.sampled.1000.peak_mib``: the peak of Python's traced allocations (numpy's included)
  while planning it once (goal ≤ 200 MiB);
- ``plan.sampled.1000.pairs_max``: the most often any pair of bots meets in that design (1: no
  pair meets twice), and ``plan.sampled.1000.tables_per_bot_spread`` (max − min, 0);
- ``plan.sampled.1000.create_s``: ``league create`` of that league through
  :func:`workers.league.create` on a fresh SQLite store, with 1,000 stored bot versions named
  by ``--bots``: resolving the entrants, planning, storing the league, its entrants and blocks;
- ``plan.sampled.1000.status_s``: what ``league status`` adds for it (the design's balance from
  the stored blocks).

Round-robin would plan C(1000, 4) ≈ 4.1·10¹⁰ tables for the same league.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

N, K, PER_BOT = 1000, 4, 12
QUICK_N = 200


def run(quick: bool) -> Iterator[dict[str, Any]]:
    from workers.planning import formats

    n = QUICK_N if quick else N
    name = f"plan.sampled.{n}"
    times = []
    blocks: list[Any] = []
    for seed in range(1 if quick else 3):
        started = time.perf_counter()
        blocks = formats.plan_sampled(n, K, PER_BOT, 1, seed + 1)
        times.append(time.perf_counter() - started)
    yield {"name": f"{name}.s", "value": round(min(times), 3), "unit": "s"}
    tracemalloc.start()
    formats.plan_sampled(n, K, PER_BOT, 1, 7)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    yield {"name": f"{name}.peak_mib", "value": round(peak / 2**20, 1), "unit": "MiB"}
    balance = formats.balance(n, [b.entrants for b in blocks])
    yield {"name": f"{name}.pairs_max", "value": balance["pair_meetings"]["max"], "unit": "meetings"}
    spread = balance["tables_per_bot"]["max"] - balance["tables_per_bot"]["min"]
    yield {"name": f"{name}.tables_per_bot_spread", "value": spread, "unit": "tables"}
    yield from _store(n, name)


def _store(n: int, name: str) -> Iterator[dict[str, Any]]:
    from workers import league as leagues
    from workers.bots.submit import reference_version
    from workers.cli import formats as formats_cli
    from workers.store import repo
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'plan.db'}")
        try:
            upgrade(engine)
            random = reference_version("classic", "random")
            for i in range(n):  # n bots with the same code: each its own bot and version
                repo.add_bot_version(
                    engine, f"bot{i}", random.content, random.sha256, random.entry_point, "classic"
                )
            started = time.perf_counter()
            league = leagues.create(
                engine,
                "many",
                [f"bot{i}" for i in range(n)],
                table_size=K,
                deals=1,
                fmt="sampled",
                per_bot=PER_BOT,
                config={"hands": 1, "target": None},
            )
            yield {"name": f"{name}.create_s", "value": round(time.perf_counter() - started, 3), "unit": "s"}
            started = time.perf_counter()
            shown = formats_cli.format_status(engine, league)
            assert shown is not None and shown[1]["tables"] == n * PER_BOT // K
            yield {"name": f"{name}.status_s", "value": round(time.perf_counter() - started, 3), "unit": "s"}
        finally:
            engine.dispose()
