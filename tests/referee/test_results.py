"""Finished results are kept compact (serialized, no driver) and bounded by count and bytes.

Memory stays flat over thousands of matches; a dropped match's GetResult answers NOT_FOUND saying
it may have been dropped; a kept one's result and events (replayed from its transcript) are whole.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import tracemalloc
from pathlib import Path

import grpc
import pytest
from refkit import ONE_HAND, Processes, transcript_of

from arena.matches import (
    FinishedMatch,
    MatchPlan,
    RefereeClient,
    RefereeError,
    local_referee,
    matches_at_once,
    play_matches,
)
from arena.referee_thread import referee_in_thread
from referee import wire
from referee.driver import FaultPolicy, TimeControl
from referee.rules.transcript import replay_states
from referee.server.results import FinishedResults
from referee.server.service import RefereeService
from referee.server.state import MatchRequest, RefereeState, UnknownMatchError
from sixnimmt.v1 import game_pb2, referee_pb2, referee_pb2_grpc

TINY = {"players": 2, "hands": 1, "hand_size": 2, "target": None}


async def _play(state: RefereeState, count: int, start: int) -> list[str]:
    """``count`` matches whose bots never connect: every decision defaulted, at once."""
    requests = [MatchRequest("classic", TINY, seed, ("a", "b")) for seed in range(start, start + count)]
    ids, _ = await state.create(requests, TimeControl(connect_ms=0), FaultPolicy())
    while state.matches:
        await asyncio.sleep(0.01)
    return ids


def test_results_stay_bounded_and_memory_flat_over_many_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every seat's no-show is a fault, logged; pytest keeps log records, which is not the referee.
    monkeypatch.setattr(logging.getLogger("referee.faults"), "disabled", True)

    async def main() -> None:
        state = RefereeState(keep_results=100, keep_results_bytes=1 << 30)
        await _play(state, 300, 0)  # warm up: the kept results are at their bound from here on
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        await _play(state, 1500, 300)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0] - before
        ids = await _play(state, 1500, 1800)
        gc.collect()
        second = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        objects = len(gc.get_objects())
        ids = await _play(state, 500, 3300)
        gc.collect()
        assert second - first < 200 << 10, (first, second)  # 1500 more matches: flat
        assert first < 1 << 20  # what replaced the warm-up's kept results (100 of ~1 kB)
        assert len(state.results) == 100 and not state.matches and not state.links
        assert len(gc.get_objects()) - objects < 500  # nothing per match left for the collector
        assert state.results.bytes < 100 * 2000  # a kept result is its bytes, ~1 kB here
        kept = state.result(ids[-1])
        assert kept.status == game_pb2.MATCH_STATUS_FINISHED and kept.digest.startswith("sha256:")
        with pytest.raises(UnknownMatchError, match="dropped"):
            state.result(ids[0])

    asyncio.run(main())


def test_a_kept_result_is_compact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the default bound (10,000), a finished match costs its serialized result, ~1 kB here:
    not its driver, states, links and history (tens of kB each before)."""
    monkeypatch.setattr(logging.getLogger("referee.faults"), "disabled", True)

    async def main() -> None:
        state = RefereeState()
        await _play(state, 50, 0)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        await _play(state, 1000, 50)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert len(state.results) == 1050
        assert grown / 1000 < 2 * state.results.bytes / len(state.results), grown

    asyncio.run(main())


def test_results_are_bounded_by_bytes_too() -> None:
    results = FinishedResults(keep=1000, max_bytes=10_000)
    for number in range(100):
        results.add(f"m{number}", game_pb2.MatchResult(match_id=f"m{number}", transcript_json="x" * 900))
    assert results.bytes <= 10_000 and 5 <= len(results) <= 11
    assert results.get("m99") is not None and results.get("m0") is None
    assert results.dropped == 100 - len(results)
    assert "keeps the latest 1000 results within 0 MiB; " in results.missing("m0")


def random_games(client: RefereeClient, bots: Processes, count: int) -> tuple[list[str], dict[str, str]]:
    """``count`` one-hand games of four created, a random SDK bot started for each entrant;
    returns the match ids and the entrants' tokens."""
    plans = [MatchPlan(("a", "b", "c", "d"), seed) for seed in range(count)]
    ids, tokens = client.create_matches("classic", ONE_HAND, plans)
    for name, token in tokens.items():
        bots.sdk(name, "random", token)
    return ids, tokens


def test_an_evicted_match_answers_not_found_and_a_kept_one_its_result_and_events() -> None:
    with local_referee(env={"SIXNIMMT_KEEP_RESULTS": "4"}) as client:
        bots = Processes(client)
        try:
            ids, tokens = random_games(client, bots, 8)
            for name in tokens:
                assert bots.wait(name) == 0
        finally:
            bots.close()
        kept, dropped = [], []
        for match_id in ids:  # matches end in any order: the 4 that ended last are kept
            try:
                kept.append(client.result(match_id, timeout=30))
            except RefereeError as exc:
                assert "NOT_FOUND" in str(exc) and "or finished and its result dropped" in str(exc)
                dropped.append(match_id)
        assert len(kept) == 4 and len(dropped) == 4
        assert all(m.status == "finished" and not any(s.faults for s in m.seats) for m in kept)
        # WatchMatch of a finished match: its events, replayed from the kept transcript.
        request = referee_pb2.WatchMatchRequest(match_id=kept[-1].match_id)
        watched = [wire.event_from_wire(e) for e in client.stub.WatchMatch(request, metadata=client.metadata)]
        _, _, events = replay_states(transcript_of(kept[-1]))
        assert watched == [event for step in events for event in step]
        with pytest.raises(grpc.RpcError) as failed:
            request = referee_pb2.WatchMatchRequest(match_id=dropped[0])
            list(client.stub.WatchMatch(request, metadata=client.metadata))
        assert failed.value.code() is grpc.StatusCode.NOT_FOUND


def test_a_run_of_more_games_than_the_referee_keeps_plays_in_parts_and_loses_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``play_matches`` reads results in creation order: with more games in flight than the referee
    keeps, the first to end were dropped before they were read, and the whole run failed at its
    end. It plays in parts of half what the referee keeps, the same games in the same order."""
    plans = [MatchPlan(("a", "b", "c", "d"), seed) for seed in range(14)]
    bots = {name: "random" for name in "abcd"}
    with local_referee() as client:
        whole = play_matches(bots, plans, config=ONE_HAND, client=client, seat_key=b"same seats")
    monkeypatch.setenv("SIXNIMMT_KEEP_RESULTS", "4")  # the referee started below and this process
    assert matches_at_once() == 2
    seen: list[int] = []
    parts = play_matches(bots, plans, config=ONE_HAND, progress=seen.append, seat_key=b"same seats")
    assert len(parts.matches) == 14 and sum(seen) == 14
    assert all(m.status == "finished" and not any(s.faults for s in m.seats) for m in parts.matches)
    # The same games (a digest also covers its match's id, which differs from run to run).
    assert [m.transcript["steps"] for m in parts.matches] == [m.transcript["steps"] for m in whole.matches]
    assert parts.exit_codes == {name: 0 for name in "abcd"}


def read_in_reverse_while_played(client: RefereeClient) -> tuple[list[str], list[FinishedMatch]]:
    """Ten games played by random SDK bots, their results asked in reverse while they are
    played (each waits until its match is over); checks the bots ended cleanly and every result
    came, finished, in the order asked. Returns the match ids and the results read."""
    bots = Processes(client)
    try:
        ids, tokens = random_games(client, bots, 10)
        read = list(client.results(ids[::-1], timeout=60))
        for name in tokens:
            assert bots.wait(name) == 0
    finally:
        bots.close()
    assert [m.match_id for m in read] == ids[::-1]
    assert all(m.status == "finished" for m in read)
    return ids, read


def test_results_come_on_one_stream_in_the_order_asked() -> None:
    """``RefereeClient.results`` reads every result on one GetResults stream, in the order asked,
    each once its match is over; an unknown id ends it with one RefereeError naming that match;
    the stream is the admin's, like GetResult."""
    with local_referee() as client:
        ids, read = read_in_reverse_while_played(client)
        one = client.result(ids[3], timeout=30)
        assert (one.digest, one.transcript, one.seats) == (read[6].digest, read[6].transcript, read[6].seats)
        got: list[str] = []
        with pytest.raises(RefereeError, match="GetResult\\(no-such-match\\) failed: NOT_FOUND"):
            for match in client.results([ids[0], "no-such-match", ids[1]], timeout=30):
                got.append(match.match_id)
        assert got == [ids[0]]
        stranger = RefereeClient(client.address, admin_token="not the admin's")
        try:
            with pytest.raises(RefereeError, match="UNAUTHENTICATED"):
                list(stranger.results(ids[:2], timeout=30))
        finally:
            stranger.close()


def test_results_from_a_referee_without_get_results_are_read_call_by_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A referee of an older version has no GetResults (UNIMPLEMENTED): ``results`` reads it with
    GetResult calls, several waiting at once, in the same order and with the same errors."""
    monkeypatch.setattr("arena.matches.RESULTS_IN_FLIGHT", 4)
    monkeypatch.setattr(RefereeService, "GetResults", referee_pb2_grpc.RefereeServicer.GetResults)
    with referee_in_thread(tmp_path) as client:
        ids, _ = read_in_reverse_while_played(client)
        with pytest.raises(RefereeError, match="GetResult\\(no-such-match\\) failed: NOT_FOUND"):
            list(client.results([ids[0], "no-such-match", ids[1]], timeout=30))


def test_a_results_transcript_is_its_canonical_json_with_meta_last_and_its_digest_covers_that() -> None:
    """One encoding serves both: the digest is the sha256 of the text up to ``meta``, which is the
    canonical JSON :meth:`Transcript.digest` hashes, and the text parses to the whole transcript."""
    import hashlib
    import json

    from referee.rules.transcript import Transcript

    async def main() -> tuple[list[str], RefereeState]:
        state = RefereeState()
        return await _play(state, 3, 0), state

    ids, state = asyncio.run(main())
    for match_id in ids:
        result = state.result(match_id)
        parsed = json.loads(result.transcript_json)
        transcript = Transcript.from_json(parsed)
        assert transcript.to_json() == parsed and parsed["meta"]["match_id"] == match_id
        assert result.digest == transcript.digest()
        covered, _, meta = result.transcript_json.rpartition(',"meta":')
        assert json.loads(meta[:-1]) == parsed["meta"] and list(parsed)[-1] == "meta"
        assert transcript.canonical_bytes() == (covered + "}").encode()
        assert result.digest == "sha256:" + hashlib.sha256((covered + "}").encode()).hexdigest()
