"""A match keeps one entry in the loop's deadline queue across its steps (``MatchDriver._arm``):
steps answered in time cost no timer, and a seat that stops answering still times out at its own
step's deadline, not at the earlier step's that the entry was armed for."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from referee.driver import (
    EntrantLink,
    FaultKind,
    FaultNotice,
    GameInfo,
    MatchDriver,
    Request,
    TimeControl,
    clock,
    match,
)
from referee.rules.core import Event, Outcome
from referee.rules.registry import make_variant


class Answers:
    """An outbox that answers on the next turn with the last option, except its seat's requests
    from the ``silent_from``-th on, which it never answers."""

    def __init__(self, link: EntrantLink, silent_from: int) -> None:
        self.link = link
        self.silent_from = silent_from
        self.requests = 0
        self.asked_at: list[float] = []

    def push_start(self, info: GameInfo) -> None:
        pass

    def push_request(self, request: Request) -> None:
        self.requests += 1
        loop = asyncio.get_running_loop()
        self.asked_at.append(loop.time())
        if self.requests < self.silent_from:
            loop.call_soon(self.link.answer, request.id, request.decision.options[-1])

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        pass

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None:
        pass

    def push_fault(self, notice: FaultNotice) -> None:
        pass

    def close(self, reason: str) -> None:
        pass


def _play(silent_from: int, decision_ms: int) -> tuple[match.MatchReport, list[Answers], int]:
    """The match's report, its bots, and the deadlines its driver armed (on a loop of its own)."""

    async def main() -> tuple[match.MatchReport, list[Answers], int]:
        loop = asyncio.get_running_loop()
        links = [EntrantLink(f"b{seat}", f"t{seat}", loop.time() + 10) for seat in range(4)]
        config = {"players": 4, "hands": 1, "target": None}
        driver = MatchDriver(
            "m", make_variant("classic", config), 5, links, time_control=TimeControl(decision_ms, 0, 1000)
        )
        bots = [Answers(link, silent_from if seat == 0 else 10**9) for seat, link in enumerate(links)]
        for link, bot in zip(links, bots, strict=True):
            link.attach(bot)
        report = await driver.run()
        return report, bots, clock.deadlines(loop).armed

    return asyncio.run(main())


def test_steps_answered_in_time_share_one_deadline_entry() -> None:
    report, _, armed = _play(10**9, 60_000)
    steps = [step for step in report.transcript.steps if step[0][0] != -1]
    assert len(steps) >= 10 and not any(s.faults for s in report.seats)
    assert armed == 1, f"{armed} deadline entries for {len(steps)} steps"


def test_a_seat_that_stops_answering_times_out_at_its_own_steps_deadline() -> None:
    decision_ms = 300
    report, bots, armed = _play(4, decision_ms)
    seat = report.seats[0]
    silent = bots[0].requests - 3
    assert silent >= 2
    assert seat.faults == {FaultKind.TIMEOUT: silent} and seat.defaulted == silent
    assert not any(s.faults for s in report.seats[1:])
    # Each silent request was waited for its whole time, counted from when it was asked (the
    # entry armed for an earlier, answered step fired before and was armed again).
    assert seat.think_seconds >= silent * decision_ms / 1000 * 0.99
    assert armed >= silent
