"""Starting a sandboxed bot: seccomp filter and memory cgroup included, against an unconfined one.

Both are timed the way ``bot.startup_ms`` is (bench_remote.py): from spawning the bot's process
to the end of a one-decision game it plays, on one referee, in alternating rounds so that load
hits both alike. The sandbox's first launch in a process (its probe, the filter's build) is
paid before the rounds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from typing import Any

from arena.matches import MatchPlan, RefereeClient, local_referee, play_matches
from workers.sandbox import Limits, Sandbox

ONE_DECISION = {"players": 2, "hands": 1, "hand_size": 1, "target": None}


def one_game_ms(client: RefereeClient, launch: Any, seed: int) -> float:
    """From spawning a random bot to the end of its one-decision game (both seats its own)."""
    start = time.perf_counter()
    play_matches(
        {"a": "random"}, [MatchPlan(("a", "a"), seed)], config=ONE_DECISION, client=client, launch=launch
    )
    return (time.perf_counter() - start) * 1000


def run(quick: bool) -> Iterator[dict[str, Any]]:
    rounds = 2 if quick else 9
    with local_referee() as client, Sandbox(Limits.from_settings()) as sandbox:
        enforced = sandbox.enforced()  # the probe, the filter and the cgroup lookup: paid once
        one_game_ms(client, None, 0)
        one_game_ms(client, sandbox, 0)
        plain, confined = [], []
        for seed in range(rounds):
            plain.append(one_game_ms(client, None, seed))
            confined.append(one_game_ms(client, sandbox, seed))
    unconfined_ms, sandboxed_ms = statistics.median(plain), statistics.median(confined)
    yield {"name": "sandbox.start_ms", "value": round(sandboxed_ms, 1), "unit": "ms"}
    yield {"name": "sandbox.unconfined_start_ms", "value": round(unconfined_ms, 1), "unit": "ms"}
    yield {"name": "sandbox.start_ratio", "value": round(sandboxed_ms / unconfined_ms, 3), "unit": "ratio"}
    yield {"name": "sandbox.memory_cgroup", "value": int(enforced.memory_cgroup), "unit": "bool"}
