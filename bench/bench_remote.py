"""Remote play: the referee and every bot in their own processes, over gRPC.

Fixed costs (starting processes, connecting) are cancelled by timing two sizes of the same run
and dividing the difference in work by the difference in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from arena.matches import MatchPlan, RefereeClient, local_referee, play_matches, spawn_bot
from referee import accel

HERE = Path(__file__).parent
ONE_HAND = {"players": 4, "hands": 1, "target": None}
UNTUNED_GC = {"SIXNIMMT_GC_THRESHOLD": "0"}
"""The referee and the bots with Python's garbage-collector defaults (no freeze, threshold 700)."""
OLD_PATH = {**UNTUNED_GC, "SIXNIMMT_BOT_EVENTS": "all"}
"""The bots as before issue 15: every event sent, converted and handed to the bot, GC untuned."""
PURE = {"SIXNIMMT_COMPILED": "off"}
"""A referee on its pure-Python modules, not the compiled hot path (referee.accel)."""


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """Bot processes spawned inside inherit ``values``."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def decision_rtt_ms(client: RefereeClient, hands: tuple[int, int]) -> float:
    """Wall time per decision step of one match whose two seats are one bot process."""

    def run(n: int) -> tuple[float, int]:
        config = {"players": 2, "hands": n, "target": None}
        elapsed, result = _timed(
            lambda: play_matches({"a": "random"}, [MatchPlan(("a", "a"), n)], config=config, client=client)
        )
        steps = sum(1 for step in result.matches[0].transcript["steps"] if step[0][0] != -1)
        return elapsed, steps

    (t1, s1), (t2, s2) = run(hands[0]), run(hands[1])
    return (t2 - t1) / (s2 - s1) * 1000


def raw_pingpong_ms(count: int) -> float:
    """The same round trip with a bare grpc.aio echo server and a client like the SDK's."""
    with tempfile.TemporaryDirectory() as tmp:
        address = f"unix:{tmp}/pingpong.sock"
        server = subprocess.Popen(
            [sys.executable, str(HERE / "pingpong.py"), "serve", address], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            server.stdout.readline()
            out = subprocess.run(
                [sys.executable, str(HERE / "pingpong.py"), "client", address, str(count)],
                capture_output=True,
                text=True,
                check=True,
            )
            return float(out.stdout.strip())
        finally:
            server.kill()
            server.wait()


def multiplexed_hands_per_s(client: RefereeClient, sizes: tuple[int, int]) -> float:
    """Four random bots as processes, every match of a run at once over one stream per bot."""
    bots = {name: "random" for name in "abcd"}

    def run(n: int) -> float:
        plans = [MatchPlan(tuple("abcd"), seed) for seed in range(n)]
        elapsed, result = _timed(lambda: play_matches(bots, plans, config=ONE_HAND, client=client))
        assert all(m.status == "finished" and not any(s.faults for s in m.seats) for m in result.matches)
        return elapsed

    t1, t2 = run(sizes[0]), run(sizes[1])
    return (sizes[1] - sizes[0]) / (t2 - t1)


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, from ``/proc/PID/stat``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def referee_pid(client: RefereeClient) -> int:
    """The process of the referee that ``client`` talks to (its Unix socket names it)."""
    socket = client.address.encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if socket in argv and b"serve" in argv:
                    return int(entry.name)
    raise RuntimeError(f"no referee process listens on {client.address}")


def children_cpu_s() -> float:
    """CPU seconds of this process's children that have ended and been waited for (the bots)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_costs(client: RefereeClient, sizes: tuple[int, int]) -> tuple[float, float, float]:
    """``remote.p4``'s run (four random bots as processes, every match at once) at two sizes:
    (hands/s, the referee's CPU ms per hand, the bots' CPU µs per decision). Hands/s and the bots'
    CPU are differences of the two sizes (starting the bots cancels out); the referee's CPU is
    that of the larger run over its hands (creating its matches and reading its results included)."""
    bots = {name: "random" for name in "abcd"}
    pid = referee_pid(client)

    def run(n: int) -> tuple[float, float, float, int]:
        """Wall time, the referee's CPU, the bots' CPU and the decisions made, of a run of n hands."""
        plans = [MatchPlan(tuple("abcd"), seed) for seed in range(n)]
        referee0, bots0 = process_cpu_s(pid), children_cpu_s()
        elapsed, result = _timed(lambda: play_matches(bots, plans, config=ONE_HAND, client=client))
        referee1, bots1 = process_cpu_s(pid), children_cpu_s()
        assert all(m.status == "finished" and not any(s.faults for s in m.seats) for m in result.matches)
        decisions = sum(
            len(step) for m in result.matches for step in m.transcript["steps"] if step[0][0] != -1
        )
        return elapsed, referee1 - referee0, bots1 - bots0, decisions

    (t1, _, b1, d1), (t2, r2, b2, d2) = run(sizes[0]), run(sizes[1])
    hands = sizes[1] - sizes[0]
    return hands / (t2 - t1), r2 / sizes[1] * 1000, (b2 - b1) / (d2 - d1) * 1e6


@contextlib.contextmanager
def null_referee(sizes: tuple[int, int], hands: tuple[int, int]) -> Iterator[tuple[str, dict[int, int]]]:
    """A :mod:`null_referee` process serving what the referee sends for ``remote.p4``'s runs of
    each of ``sizes`` (tokens ``<size>-<entrant>``) and for ``grpc.decision_rtt_ms``'s match of
    each of ``hands`` (token ``rtt<hands>``); yields its address and the decision steps of the
    match of each of ``hands``."""
    from null_referee import Recording, _record, running

    recording: Recording = {}
    for size in sizes:
        played = asyncio.run(_record(size))
        recording.update({f"{size}-{name}": updates for name, updates in played.items()})
    for n in hands:
        config = {"players": 2, "hands": n, "target": None}
        recording[f"rtt{n}"] = asyncio.run(_record(1, 1 << 20, config, seats="aa"))["a"]
    # Both seats on one connection: every step's requests are one Update, answered before the next.
    steps = {n: sum(1 for _, asked in recording[f"rtt{n}"] if asked) for n in hands}
    with running(recording) as (address, _):
        yield address, steps


def floor_rtt_ms(address: str, steps: Mapping[int, int], hands: tuple[int, int]) -> float:
    """:func:`decision_rtt_ms` against the :mod:`null_referee` at ``address``: the same match's
    Updates, one step at a time, with nothing of the referee's own work between them."""

    def run(n: int) -> tuple[float, int]:
        start = time.perf_counter()
        bot = spawn_bot("random", referee=address, token=f"rtt{n}", variant="classic", name="a")
        code = bot.wait(600)
        assert code == 0, bot.stderr_tail()
        return time.perf_counter() - start, steps[n]

    (t1, s1), (t2, s2) = run(hands[0]), run(hands[1])
    return (t2 - t1) / (s2 - s1) * 1000


def floor_costs(address: str, sizes: tuple[int, int]) -> tuple[float, float]:
    """``remote.p4``'s run with the referee's own work taken away: the four random bots as
    processes, every match at once, against the :mod:`null_referee` at ``address``, which only
    carries the Updates the referee sent for the same matches and counts the replies.
    (hands/s, the server's CPU ms per hand), measured as :func:`cpu_costs` measures them."""
    pid = null_referee_pid(address)

    def run(n: int) -> tuple[float, float]:
        cpu0 = process_cpu_s(pid)
        start = time.perf_counter()
        bots = [
            spawn_bot("random", referee=address, token=f"{n}-{name}", variant="classic", name=name)
            for name in "abcd"
        ]
        codes = [bot.wait(600) for bot in bots]
        elapsed = time.perf_counter() - start
        assert codes == [0, 0, 0, 0], [bot.stderr_tail() for bot in bots]
        return elapsed, process_cpu_s(pid) - cpu0

    (t1, _), (t2, c2) = run(sizes[0]), run(sizes[1])
    return (sizes[1] - sizes[0]) / (t2 - t1), c2 / sizes[1] * 1000


def null_referee_pid(address: str) -> int:
    """The process of the null referee listening on ``address``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if address.encode() in argv and b"serve" in argv:
                    return int(entry.name)
    raise RuntimeError(f"no null referee listens on {address}")


def single_stream_hands_per_s(client: RefereeClient, sizes: tuple[int, int]) -> float:
    """The baseline: one game per stream, games one after another (each a set of its own)."""

    def run(n: int) -> float:
        start = time.perf_counter()
        ids, tokens = [], {name: [] for name in "abcd"}
        for seed in range(n):
            match_ids, set_tokens = client.create_matches(
                "classic", ONE_HAND, [MatchPlan(tuple("abcd"), seed)], connect_ms=60_000
            )
            ids += match_ids
            for name, token in set_tokens.items():
                tokens[name].append(token)
        processes = [
            spawn_bot("random", referee=client.address, token=",".join(t), variant="classic", name=name)
            for name, t in tokens.items()
        ]
        try:
            for match_id in ids:
                client.result(match_id, wait=True, timeout=600)
        finally:
            for process in processes:
                process.wait(30)
        return time.perf_counter() - start

    t1, t2 = run(sizes[0]), run(sizes[1])
    return (sizes[1] - sizes[0]) / (t2 - t1)


def startup_ms(client: RefereeClient, repeats: int) -> float:
    """From spawning a bot process to the end of a one-decision game it plays."""
    config = {"players": 2, "hands": 1, "hand_size": 1, "target": None}
    times = []
    for seed in range(repeats):
        elapsed, _ = _timed(
            lambda seed=seed: play_matches(
                {"a": "random"}, [MatchPlan(("a", "a"), seed)], config=config, client=client
            )
        )
        times.append(elapsed * 1000)
    return statistics.median(times)


def run(quick: bool) -> Iterator[dict[str, Any]]:
    with local_referee() as client:
        rtt_hands = (2, 8) if quick else (5, 60)
        rtt = decision_rtt_ms(client, rtt_hands)
        raw = raw_pingpong_ms(300 if quick else 3000)
        yield {"name": "grpc.decision_rtt_ms", "value": round(rtt, 3), "unit": "ms"}
        yield {"name": "grpc.raw_rtt_ms", "value": round(raw, 3), "unit": "ms"}
        yield {"name": "grpc.rtt_ratio", "value": round(rtt / raw, 3), "unit": "ratio"}
        # The lighter path against the old one and against an untuned GC, in the same run, each
        # with its own referee process, rounds interleaved so that load hits all three alike.
        sizes = (20, 80) if quick else (100, 600)
        runs: dict[str, list[float]] = {"new": [], "gc": [], "old": []}
        with local_referee(env=UNTUNED_GC) as untuned, local_referee(env=UNTUNED_GC) as old:
            for _ in range(1 if quick else 3):
                runs["new"].append(multiplexed_hands_per_s(client, sizes))
                with _environ(UNTUNED_GC):
                    runs["gc"].append(multiplexed_hands_per_s(untuned, sizes))
                with _environ(OLD_PATH):
                    runs["old"].append(multiplexed_hands_per_s(old, sizes))
        multi, untuned_gc, old_path = (statistics.median(runs[k]) for k in ("new", "gc", "old"))
        # The referee's and the bots' CPU, on the same referee process as remote.p4.hands_per_s,
        # each round beside the same run on the null referee (gRPC's transport alone).
        # And on a referee of the pure-Python modules (SIXNIMMT_COMPILED=off), rounds interleaved:
        # what the compiled hot path (referee.accel) gives, in the same run.
        costs, floors, pure = [], [], []
        with null_referee(sizes, rtt_hands) as (address, steps), local_referee(env=PURE) as pure_client:
            floor_rtt = floor_rtt_ms(address, steps, rtt_hands)
            for _ in range(1 if quick else 3):
                costs.append(cpu_costs(client, sizes))
                floors.append(floor_costs(address, sizes))
                pure.append(cpu_costs(pure_client, sizes))
        referee_ms = statistics.median(c[1] for c in costs)
        pure_ms = statistics.median(c[1] for c in pure)
        bot_us = statistics.median(c[2] for c in costs)
        single = single_stream_hands_per_s(client, (2, 6) if quick else (5, 30))
        yield {"name": "remote.p4.hands_per_s", "value": round(multi, 1), "unit": "hands/s"}
        yield {"name": "remote.p4.hands_per_s.old_path", "value": round(old_path, 1), "unit": "hands/s"}
        yield {"name": "remote.p4.lighter_ratio", "value": round(multi / old_path, 3), "unit": "ratio"}
        yield {"name": "remote.p4.gc_ratio", "value": round(multi / untuned_gc, 3), "unit": "ratio"}
        yield {"name": "referee.cpu_ms_per_hand", "value": round(referee_ms, 3), "unit": "ms"}
        # Whether the referees this bench starts run the build (make bench builds it first).
        yield {"name": "referee.compiled", "value": int(accel.why_pure() is None), "unit": "bool"}
        yield {"name": "referee.cpu_ms_per_hand.pure", "value": round(pure_ms, 3), "unit": "ms"}
        yield {
            "name": "referee.compiled_ratio",
            "value": round(statistics.median(c[1] / p[1] for c, p in zip(costs, pure, strict=True)), 3),
            "unit": "ratio",
        }
        yield {"name": "bot.sdk.cpu_us_per_decision", "value": round(bot_us, 1), "unit": "us"}
        yield {
            "name": "referee.floor.cpu_ms_per_hand",
            "value": round(statistics.median(f[1] for f in floors), 3),
            "unit": "ms",
        }
        yield {
            "name": "referee.floor_share",
            "value": round(statistics.median(f[1] / c[1] for f, c in zip(floors, costs, strict=True)), 3),
            "unit": "ratio",
        }
        yield {"name": "grpc.floor_rtt_ms", "value": round(floor_rtt, 3), "unit": "ms"}
        yield {"name": "grpc.floor_rtt_ratio", "value": round(floor_rtt / raw, 3), "unit": "ratio"}
        yield {
            "name": "remote.p4.floor.hands_per_s",
            "value": round(statistics.median(f[0] for f in floors), 1),
            "unit": "hands/s",
        }
        yield {"name": "remote.p4.hands_per_s.single", "value": round(single, 1), "unit": "hands/s"}
        yield {
            "name": "bot.startup_ms",
            "value": round(startup_ms(client, 1 if quick else 5), 1),
            "unit": "ms",
        }
