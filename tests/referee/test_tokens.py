"""Tokens bind a connection to its seats: a token in use, a spent token and a made-up one are refused."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from refkit import ONE_HAND, Processes

from arena.matches import MatchPlan, RefereeClient, RefereeError
from sixnimmt.v1 import referee_pb2


def wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} did not appear"
        time.sleep(0.01)


def test_another_sets_token_is_refused_and_its_owner_plays_on(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    (match_id,), tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("a", "r", "r", "r"), 31)])
    (other_id,), other_tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("b",) * 4, 32)])
    asked, go = tmp_path / "asked", tmp_path / "go"
    bots.sdk("a", ":Gated", tokens["a"], BOT_ASKED=str(asked), BOT_GO=str(go))
    bots.sdk("r", "random", tokens["r"])
    wait_for(asked)  # "a" is connected and thinking about its first card

    # The bot of the other set presents "a"'s token instead of its own.
    assert bots.raw("b", "first", tokens["a"]).wait(30) == 5
    assert "ALREADY_EXISTS" in bots.stderr("b")
    go.touch()
    match = referee.result(match_id, timeout=60)
    assert match.status == "finished"
    assert [(s.faults, s.defaulted) for s in match.seats] == [({}, 0)] * 4

    # Once the set is over its tokens are spent; a made-up token never worked.
    assert bots.raw("late", "first", tokens["a"]).wait(30) == 5
    assert "UNAUTHENTICATED" in bots.stderr("late")
    assert bots.raw("made-up", "first", "not-a-token").wait(30) == 5
    assert "UNAUTHENTICATED" in bots.stderr("made-up")

    # The other set's own bot was never bothered: it plays its match with its own token.
    bots.raw("b-own", "first", other_tokens["b"])
    other = referee.result(other_id, timeout=60)
    assert [(s.faults, s.defaulted) for s in other.seats] == [({}, 0)] * 4
    assert bots.wait("b-own") == 0
    assert bots.wait("a") == bots.wait("r") == 0


def test_admin_calls_need_the_admin_token(referee: RefereeClient) -> None:
    """A bot reaches the referee's socket, but cannot read results, watch matches or create any."""
    (match_id,), _ = referee.create_matches("classic", ONE_HAND, [MatchPlan(("x",) * 4, 33)])
    stranger = RefereeClient(referee.address, admin_token="guess")
    try:
        for call in (
            lambda: stranger.result(match_id, wait=False),
            lambda: stranger.create_matches("classic", ONE_HAND, [MatchPlan(("y",) * 4, 34)]),
        ):
            with pytest.raises(RefereeError, match="UNAUTHENTICATED"):
                call()
        with pytest.raises(grpc.RpcError) as watched:
            list(stranger.stub.WatchMatch(referee_pb2.WatchMatchRequest(match_id=match_id), timeout=10))
        assert watched.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        stranger.close()
    assert referee.result(match_id, wait=False).match_id == match_id
