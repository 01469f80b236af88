"""Faults with reasons: a bot's exception is its own fault kind, and the bot is told of its faults.

Real processes: the referee, an SDK bot that raises, and random bots.
"""

from __future__ import annotations

from pathlib import Path

from refkit import ONE_HAND, Processes, marks, seat_decisions

from arena.matches import MatchPlan, RefereeClient
from referee.faults import FaultKind
from sixnimmt.v1 import game_pb2, referee_pb2


def test_an_exception_is_its_own_fault_with_the_traceback_as_reason(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    notices = tmp_path / "notices.txt"
    (match_id,), tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("bad", "r", "r", "r"), 5)])
    bots.sdk("r", "random", tokens["r"])
    bots.sdk("bad", ":Raiser", tokens["bad"], BOT_RAISE="2", BOT_NOTICES=str(notices))

    match = referee.result(match_id, timeout=60)
    bad = match.seats[0]
    assert bad.faults == {FaultKind.EXCEPTION: 2}
    assert bad.defaulted == 2
    assert marks(seat_decisions(match, 0)).count("d") == 2
    # The transcript says at which step each fault was (the replay frame of the defaulted action).
    seat_steps = [i for i, step in enumerate(match.transcript["steps"], 1) if 0 in dict(step)]
    own = marks(seat_decisions(match, 0))
    defaulted = [i for i, mark in zip(seat_steps, own, strict=True) if mark == "d"]
    fault_steps = match.transcript["meta"]["fault_steps"]
    assert fault_steps[0] == [{"step": step, "kind": "exception"} for step in defaulted]
    assert fault_steps[1:] == [[], [], []]
    # One cause (the same error raised at the same line), told with its first example.
    reasons = {(kind, reason.splitlines()[-1]): count for kind, reason, count in bad.reasons}
    assert reasons == {(FaultKind.EXCEPTION, "ValueError: boom at card decision 1"): 2}
    assert all("sdkbots.py" in reason and "in before" in reason for _, reason, _ in bad.reasons)

    # The bot was told: its on_fault hook got both notices, and the runner logged them to stderr.
    assert bots.wait("bad") == 0
    told = notices.read_text().splitlines()
    assert len(told) == 2 and all("EXCEPTION" in line and match_id in line for line in told)
    stderr = bots.stderr("bad")
    assert stderr.count(f"sixnimmt: fault (exception) in match {match_id} seat 0, request ") == 2
    assert "ValueError: boom at card decision 2" in stderr


def test_illegal_actions_and_timeouts_say_why(referee: RefereeClient, bots: Processes) -> None:
    plans = [MatchPlan(("illegal", "r", "r", "r"), 5), MatchPlan(("slow", "r2", "r2", "r2"), 6)]
    ids, tokens = referee.create_matches("classic", ONE_HAND, plans, decision_ms=300, bank_ms=0)
    bots.sdk("r", "random", tokens["r"])
    bots.sdk("r2", "random", tokens["r2"])
    bots.sdk("illegal", ":Illegal", tokens["illegal"], BOT_ILLEGAL="1")
    bots.sdk("slow", ":Sleeper", tokens["slow"], BOT_SLEEP="0.8")
    illegal, slow = (referee.result(match_id, timeout=60) for match_id in ids)
    ((kind, reason, count),) = illegal.seats[0].reasons
    assert (kind, count) == (FaultKind.ILLEGAL, 1)
    assert "is not a legal card decision (options: " in reason
    # The first decision sleeps 0.8 s; the second waits behind it: both time out, for one reason.
    ((kind, reason, count),) = slow.seats[0].reasons
    assert (kind, reason) == (FaultKind.TIMEOUT, "no answer within 300 ms and the 0 ms left in the time bank")
    assert count == slow.seats[0].faults[FaultKind.TIMEOUT] >= 1


def test_a_reply_for_a_request_of_another_connection_is_told_but_charged_to_no_seat(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    log = tmp_path / "received.bin"
    (match_id,), tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("bad", "r", "r", "r"), 5)])
    bots.sdk("r", "random", tokens["r"])
    bots.raw("bad", "foreign", tokens["bad"], "--count", "1", "--log", str(log))
    match = referee.result(match_id, timeout=60)
    assert [s.faults for s in match.seats] == [{}] * 4
    assert bots.wait("bad") == 0
    notices = []
    data = log.read_bytes()
    while data:
        size, data = int.from_bytes(data[:4], "big"), data[4:]
        message = referee_pb2.RefereeMessage.FromString(data[:size])
        data = data[size:]
        if message.WhichOneof("kind") == "update":
            notices += list(message.update.faults)
    # Three ids per request of its first batch: the two next to its own belong to other seats.
    assert len(notices) == 3
    assert {(n.match_id, n.seat, n.kind) for n in notices} == {("", -1, game_pb2.FAULT_KIND_PROTOCOL)}
    assert all("which this connection was not sent" in n.reason for n in notices)
