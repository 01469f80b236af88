"""``bench/null_referee.py``: the referee's floor plays back exactly what the referee sent.

``referee.floor.cpu_ms_per_hand`` and ``grpc.floor_rtt_ms`` (docs/bench.md) are only worth
something if the null referee carries the real referee's Updates, whole, to real bots, and
waits for every answer as the referee does. These tests hold it to that.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from arena.matches import spawn_bot
from sixnimmt.v1 import referee_pb2

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _null_referee() -> Any:
    """``bench/null_referee.py`` as a module (the bench directory is not a package; the module
    imports its neighbour ``pingpong``, as it does when it runs there)."""
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    spec = importlib.util.spec_from_file_location("null_referee_under_test", BENCH / "null_referee.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _updates(chunks: list[bytes]) -> list[referee_pb2.Update]:
    return [referee_pb2.RefereeMessage.FromString(chunk).update for chunk in chunks]


def test_a_recording_holds_every_request_start_and_over_once_in_updates_of_at_most_a_chunk() -> None:
    null = _null_referee()
    recording = asyncio.run(null._record(5, 7))
    assert set(recording) == set("abcd")
    for rounds in recording.values():
        ids: list[int] = []
        starts = overs = 0
        for chunks, asked in rounds:
            updates = _updates(chunks)
            assert sum(len(u.requests) for u in updates) == asked
            assert all(len(u.requests) <= 7 for u in updates)
            # Starts go with a round's first Update, game overs with its last.
            assert all(not u.starts for u in updates[1:]) and all(not u.overs for u in updates[:-1])
            starts += sum(len(u.starts) for u in updates)
            overs += sum(len(u.overs) for u in updates)
            ids += [r.id for u in updates for r in u.requests]
        assert starts == overs == 5  # one seat in each of the five matches
        assert len(ids) == len(set(ids))
        # Each of the five one-hand matches asks the seat at least once per card of its hand.
        per_match = Counter(r.match_id for chunks, _ in rounds for u in _updates(chunks) for r in u.requests)
        assert set(per_match) == {f"m{seed}" for seed in range(5)} and min(per_match.values()) >= 10


def test_one_match_with_both_seats_on_one_connection_is_one_update_a_step() -> None:
    null = _null_referee()
    recording = asyncio.run(null._record(1, 1 << 20, {"players": 2, "hands": 2, "target": None}, seats="aa"))
    rounds = recording["a"]
    assert all(len(chunks) == 1 for chunks, _ in rounds)
    asked = [n for _, n in rounds if n]
    # A turn asks both seats at once; a low card's row choice asks one.
    assert set(asked) <= {1, 2} and asked.count(2) == 20


def test_real_bots_play_a_recording_to_the_end_against_the_null_referee() -> None:
    null = _null_referee()
    recording = asyncio.run(null._record(3))
    with null.running({f"t-{name}": rounds for name, rounds in recording.items()}) as (address, server):
        bots = [
            spawn_bot("random", referee=address, token=f"t-{name}", variant="classic", name=name)
            for name in "abcd"
        ]
        # A bot ends once the server said goodbye, which it does only after the last round's
        # answers (and its "played" line): every request was answered, every game over delivered.
        codes = [bot.wait(120) for bot in bots]
        assert codes == [0, 0, 0, 0], [bot.stderr_tail() for bot in bots]
        played = sorted(server.stdout.readline().split() for _ in bots)
        assert played == [
            ["played", f"t-{name}", str(sum(asked for _, asked in recording[name]))] for name in "abcd"
        ]
        assert server.poll() is None  # one server plays any number of streams
