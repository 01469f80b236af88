"""The referee's own work per hand without gRPC: driver, links, connection buffers and codec.

Four entrants, N one-hand classic matches at once, on one event loop in this process: each
entrant's connection is the referee's real :class:`~referee.server.connection.Connection`
(Updates assembled as the bytes the stream sends), and its "bot" is a task that parses each Update
and answers every request of it at once with its last option. The CPU time of this process per hand is the
referee's per-step cost with gRPC's left out (the sockets, the HTTP/2 framing, the messages'
serialization), plus the bots' reading of the requests' ids and options. The garbage collector is
tuned as the referee process tunes it (``referee.settings.tune_gc``: start-up objects frozen, the
first threshold ``SIXNIMMT_GC_THRESHOLD``), for the measurement only. Steadier than
``referee.cpu_ms_per_hand`` on a busy machine: one process, no waiting on others.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from referee.driver import EntrantLink, FaultPolicy, MatchDriver, MatchReport, TimeControl
from referee.rules.registry import make_variant
from referee.server.connection import Connection
from referee.settings import load, tune_gc
from sixnimmt.v1 import referee_pb2

CONFIG = {"players": 4, "hands": 1, "target": None}


Observe = Callable[[str, bytes, referee_pb2.Update], None]


async def play(
    matches: int,
    *,
    config: dict[str, Any] | None = None,
    seats: str = "abcd",
    table_once: bool = False,
    observe: Observe | None = None,
) -> list[MatchReport]:
    """``matches`` matches of classic (``config``, by default :data:`CONFIG`) on the real driver
    in this event loop, seated as ``seats`` (an entrant's name per seat; the match's seed is its
    number). Each entrant's connection is a real :class:`Connection` that takes no events (and,
    with ``table_once``, a step's table once per Update, as the SDK asks); its "bot" is a task that
    parses each Update and answers every request of it at once with its last option.
    ``observe(entrant, message, update)`` sees each Update, as the bytes the stream sends, first."""
    loop = asyncio.get_running_loop()
    names = list(dict.fromkeys(seats))
    links = {name: EntrantLink(name, name, loop.time() + 60) for name in names}
    connections = {name: Connection(events=False, table_once=table_once) for name in names}
    drivers = [
        MatchDriver(
            f"m{seed}",
            make_variant("classic", config or CONFIG),
            seed,
            [links[name] for name in seats],
            time_control=TimeControl(2000, 10_000, 60_000),
            policy=FaultPolicy(send_events=False),
        )
        for seed in range(matches)
    ]

    async def bot(name: str) -> None:
        link, connection = links[name], connections[name]
        while (message := await connection.next_message()) is not None:
            if not isinstance(message, bytes):
                continue  # the goodbye
            update = referee_pb2.RefereeMessage.FromString(message).update
            if observe is not None:
                observe(name, message, update)
            for request in update.requests:
                link.answer(request.id, request.options[-1])

    bots = [asyncio.create_task(bot(name)) for name in names]
    for name in names:
        links[name].attach(connections[name])
    reports = await asyncio.gather(*(driver.run() for driver in drivers))
    await asyncio.gather(*bots)
    return list(reports)


@contextlib.contextmanager
def _referee_gc() -> Iterator[None]:
    """The collector as a referee process has it (frozen start-up, its first threshold), then back."""
    threshold = gc.get_threshold()
    tune_gc(load())
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def cpu_ms_per_hand(matches: int, repeats: int) -> float:
    """The least CPU time per hand of ``repeats`` runs of ``matches`` one-hand matches at once."""
    best = float("inf")
    with _referee_gc():
        for _ in range(repeats):
            start = time.process_time()
            reports = asyncio.run(play(matches))
            best = min(best, time.process_time() - start)
            assert all(not any(s.faults for s in r.seats) for r in reports)
    return best / matches * 1000


def compiled_cpu_ms_per_hand(matches: int, repeats: int) -> float | None:
    """:func:`cpu_ms_per_hand` in a process of its own on the compiled hot path (referee.accel),
    or ``None`` without a current build (``make compiled``)."""
    from referee import accel

    if accel.stale() is not None:
        return None
    code = (
        "import sys; from referee import accel; accel.enable('require')\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_referee\n"
        f"print(bench_referee.cpu_ms_per_hand({matches}, {repeats}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def run(quick: bool) -> Iterator[dict[str, Any]]:
    matches, repeats = (50, 1) if quick else (300, 5)
    value = cpu_ms_per_hand(matches, repeats)
    yield {"name": "referee.driver.cpu_ms_per_hand", "value": round(value, 3), "unit": "ms"}
    compiled = compiled_cpu_ms_per_hand(matches, repeats)
    if compiled is not None:
        yield {"name": "referee.driver.cpu_ms_per_hand.compiled", "value": round(compiled, 3), "unit": "ms"}
        yield {"name": "referee.driver.compiled_ratio", "value": round(compiled / value, 3), "unit": "ratio"}
