"""Faults with reasons: a bot's exception is its own fault kind, and the bot is told of its faults.

Real processes: the referee, an SDK bot that raises, and random bots.
"""

from __future__ import annotations

from pathlib import Path

from refkit import ONE_HAND, Processes, marks, seat_decisions

from bot_sdk.remote import MatchPlan, RefereeClient
from referee.faults import FaultKind


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
    reasons = {(kind, reason.splitlines()[-1]): count for kind, reason, count in bad.reasons}
    assert reasons == {
        (FaultKind.EXCEPTION, "ValueError: boom at card decision 1"): 1,
        (FaultKind.EXCEPTION, "ValueError: boom at card decision 2"): 1,
    }
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
