"""Misbehaving bots, each a real process against a real referee process.

Every case plays one match of a bad bot against three random ones while another match set of
well-behaved bots runs on the same referee. The bad match must complete, the faults must be
counted by kind on the bad seat only, its missing answers must be the default action, and the
other matches must play exactly as they would in-process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from refkit import ONE_HAND, TWO_HANDS, Processes, marks, random_digest, seat_decisions

from arena.matches import MatchPlan, RefereeClient
from arena.tournament import LOCAL_SEAT_KEY

BAD_SEED = 11
GOOD_SEEDS = (21, 22)


@dataclass(frozen=True)
class Case:
    """One way to misbehave, and what the referee must make of it."""

    name: str
    start: Callable[[Processes, str], Any]
    """Start the bad bot with its token."""
    faults: dict[str, int]
    """The bad seat's faults by kind, exactly."""
    pattern: str
    """The bad seat's decisions, as :func:`refkit.marks` letters (o own, d default, = same)."""
    defaulted: int | str | None
    """How many decisions were defaulted: a number, ``"all"``, or ``None`` (not fixed)."""
    create: dict[str, Any] = field(default_factory=dict)
    """Time control and fault policy of the bad match's set."""
    forfeited: bool = False


def sdk(spec: str, **env: str) -> Callable[[Processes, str], Any]:
    return lambda bots, token: bots.sdk("bad", spec, token, **env)


def raw(mode: str, *options: str) -> Callable[[Processes, str], Any]:
    return lambda bots, token: bots.raw("bad", mode, token, *options)


CASES = [
    Case(
        "sleeps past the deadline",
        # The first answer is 0.5 s late and spends half the bank; the second is later than
        # what is left, so it times out (and its late answer is ignored); the rest are on time.
        sdk(":Sleeper", BOT_SLEEP="1.5,2.0"),
        {"timeout": 1},
        "[o=]*d[o=]*",
        1,
        {"decision_ms": 1000, "bank_ms": 1000},
    ),
    Case("crashes mid-game", sdk(":Crasher", BOT_CRASH_AT="3"), {"crash": 1}, "[o=]*o[o=]*d[d=]*", None),
    # Its first two card decisions are illegal; a row decision (its own answer) may come between.
    Case("plays cards it does not hold", sdk(":Illegal", BOT_ILLEGAL="2"), {"illegal": 2}, "[d=]*d[do=]*", 2),
    Case(
        "exits before its first message",
        raw("exit_early"),
        {"disconnect": 1},
        "[d=]+",
        "all",
        {"connect_ms": 3000},
    ),
    Case(
        "writes junk bytes to the socket",
        raw("junk_socket"),
        {"disconnect": 1},
        "[d=]+",
        "all",
        {"connect_ms": 3000},
    ),
    Case("sends an undecodable message", raw("garbage"), {"protocol": 1}, "[d=]+", "all"),
    Case("closes its stream without goodbye", raw("quit"), {"disconnect": 1}, "[d=]+", "all"),
    # A reply naming a request this connection was not sent can affect none of its matches: it
    # is charged to no seat (only told to the bot); too many of them make a flood.
    Case("answers for seats that are not its own", raw("foreign", "--count", "2", "--last"), {}, "[o=]+", 0),
    Case(
        "sends replies that concern none of its seats",
        raw("stray", "--count", "100"),
        {"protocol": 1},
        "[d=]+",
        "all",
    ),
    # A second answer is charged to the seat of the request it names.
    Case(
        "forfeits after too many faults",
        raw("twice", "--count", "3", "--last"),
        {"protocol": 3},
        "[o=]*o[d=]+",
        None,
        {"max_faults": 2},
        forfeited=True,
    ),
    Case("answers requests twice", raw("twice", "--count", "3", "--last"), {"protocol": 3}, "[o=]+", 0),
    Case("floods the stream", raw("flood", "--count", "2000"), {"protocol": 1}, "[d=]+", "all"),
    # gRPC refuses a message over the limit unread and cancels the stream: to the referee that is
    # a broken connection.
    Case("sends a 10 MB message", raw("huge", "--last"), {"crash": 1}, "[d=]+", "all"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_misbehaving_bot(case: Case, referee: RefereeClient, bots: Processes) -> None:
    good_ids, good_tokens = referee.create_matches(
        "classic", TWO_HANDS, [MatchPlan(("g",) * 4, seed) for seed in GOOD_SEEDS], seat_key=LOCAL_SEAT_KEY
    )
    bots.sdk("g", ":SlowRandom", good_tokens["g"], BOT_THINK="0.005")
    (bad_id,), tokens = referee.create_matches(
        "classic",
        ONE_HAND,
        [MatchPlan(("bad", "r", "r", "r"), BAD_SEED)],
        seat_key=LOCAL_SEAT_KEY,
        **case.create,
    )
    bots.sdk("r", "random", tokens["r"])
    case.start(bots, tokens["bad"])

    match = referee.result(bad_id, timeout=60)
    assert match.status == "finished", match.error
    bad, *others = match.seats
    decisions = seat_decisions(match, 0)
    assert bad.faults == case.faults
    assert bad.forfeited is case.forfeited
    assert bad.decisions + bad.defaulted == len(decisions)
    expected_defaulted = len(decisions) if case.defaulted == "all" else case.defaulted
    if expected_defaulted is not None:
        assert bad.defaulted == expected_defaulted
    assert re.fullmatch(case.pattern, marks(decisions)), marks(decisions)
    for seat in others:
        assert (seat.faults, seat.defaulted, seat.forfeited) == ({}, 0, False)

    for match_id, seed in zip(good_ids, GOOD_SEEDS, strict=True):
        good = referee.result(match_id, timeout=60)
        assert good.status == "finished"
        assert [(s.faults, s.defaulted) for s in good.seats] == [({}, 0)] * 4
        assert good.digest == random_digest(TWO_HANDS, seed)
    assert bots.wait("g") == 0
    assert bots.wait("r") == 0
    bots.wait("bad")
    referee.wait_serving(timeout=5)
