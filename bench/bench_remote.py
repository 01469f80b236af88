"""Remote play: the referee and every bot in their own processes, over gRPC.

Fixed costs (starting processes, connecting) are cancelled by timing two sizes of the same run
and dividing the difference in work by the difference in time.
"""

from __future__ import annotations

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

HERE = Path(__file__).parent
ONE_HAND = {"players": 4, "hands": 1, "target": None}
UNTUNED_GC = {"SIXNIMMT_GC_THRESHOLD": "0"}
"""The referee and the bots with Python's garbage-collector defaults (no freeze, threshold 700)."""
OLD_PATH = {**UNTUNED_GC, "SIXNIMMT_BOT_EVENTS": "all"}
"""The bots as before issue 15: every event sent, converted and handed to the bot, GC untuned."""


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
        rtt = decision_rtt_ms(client, (2, 8) if quick else (5, 60))
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
        # The referee's and the bots' CPU, on the same referee process as remote.p4.hands_per_s.
        costs = [cpu_costs(client, sizes) for _ in range(1 if quick else 3)]
        referee_ms = statistics.median(c[1] for c in costs)
        bot_us = statistics.median(c[2] for c in costs)
        single = single_stream_hands_per_s(client, (2, 6) if quick else (5, 30))
        yield {"name": "remote.p4.hands_per_s", "value": round(multi, 1), "unit": "hands/s"}
        yield {"name": "remote.p4.hands_per_s.old_path", "value": round(old_path, 1), "unit": "hands/s"}
        yield {"name": "remote.p4.lighter_ratio", "value": round(multi / old_path, 3), "unit": "ratio"}
        yield {"name": "remote.p4.gc_ratio", "value": round(multi / untuned_gc, 3), "unit": "ratio"}
        yield {"name": "referee.cpu_ms_per_hand", "value": round(referee_ms, 3), "unit": "ms"}
        yield {"name": "bot.sdk.cpu_us_per_decision", "value": round(bot_us, 1), "unit": "us"}
        yield {"name": "remote.p4.hands_per_s.single", "value": round(single, 1), "unit": "hands/s"}
        yield {
            "name": "bot.startup_ms",
            "value": round(startup_ms(client, 1 if quick else 5), 1),
            "unit": "ms",
        }
