"""The local round-robin (``sixnimmt arena``): in-process against gRPC on the same games, and how
evenly the in-process pool keeps its processes busy."""

from __future__ import annotations

import multiprocessing
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from arena.tournament import game_tasks, plan_round_robin, play_games, run_tournament

FIELD = ["random", "lowest", "highest", "heuristic", "mc"]
"""``sixnimmt arena``'s default bots."""
PROCESSES = 2


def _cpu_seconds(pid: int) -> float:
    """A live process's user and system CPU time, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def balance(specs: Sequence[str], deals: int) -> float:
    """The pool's CPU seconds over ``PROCESSES`` × its busiest process's: 1.0 when every process
    works as long as the busiest, 0.5 when one of two does everything. CPU time, not wall time,
    so other work on the machine does not move it. The games go out as ``run_tournament`` sends
    them (:func:`game_tasks`)."""
    blocks = plan_round_robin(len(specs), 4, deals, 1)
    with ProcessPoolExecutor(max_workers=PROCESSES) as pool:
        futures = [
            pool.submit(play_games, t, "classic", {"players": 4}, specs)
            for t in game_tasks(blocks, PROCESSES)
        ]
        for future in as_completed(futures):
            future.result()
        busy = [_cpu_seconds(child.pid) for child in multiprocessing.active_children() if child.pid]
    return sum(busy) / (PROCESSES * max(busy))


def in_process_over_grpc(deals: int, pairs: int) -> float:
    """Median over interleaved pairs of the in-process run's wall time over the gRPC run's."""
    ratios = []
    for _ in range(pairs):
        times = {}
        for remote in (False, True):
            started = time.perf_counter()
            run_tournament(FIELD, table_size=4, deals=deals, processes=PROCESSES, remote=remote)
            times[remote] = time.perf_counter() - started
        ratios.append(times[False] / times[True])
    return statistics.median(ratios)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    yield {"name": "arena.pool.balance.one_block", "value": round(balance(["mc"] * 4, 1), 3), "unit": "share"}
    deals = 1 if quick else 2
    value = round(balance(FIELD, deals), 3)
    yield {"name": "arena.pool.balance.round_robin", "value": value, "unit": "share"}
    ratio = in_process_over_grpc(deals, 1 if quick else 3)
    yield {"name": "arena.round_robin.in_process_over_grpc", "value": round(ratio, 3), "unit": "ratio"}
