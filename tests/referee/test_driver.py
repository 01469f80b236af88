"""The match driver with in-process fake connections: time bank, faults, defaults, forfeits.

A :class:`FakeBot` is the driver's :class:`~referee.driver.Outbox` for one link; a strategy
decides, per request, when it answers and with what (or not at all). Two-player, one-hand
classic games on a real event loop; the delays are a few hundred milliseconds with wide margins.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from referee.driver import (
    EntrantLink,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameInfo,
    MatchDriver,
    MatchReport,
    Request,
    TimeControl,
)
from referee.driver.links import MAX_STRAYS
from referee.rules.core import Action, DecisionKind, Event, Outcome
from referee.rules.registry import make_variant

Answer = tuple[float, Action] | None
"""After how many seconds a bot answers, and what; ``None``: it never does."""
Strategy = Callable[["FakeBot", Request, int], Answer]
"""The answer of a bot to a request, given how many requests it got before."""


def highest(bot: FakeBot, request: Request, number: int) -> Answer:
    """At once, the last option: the highest card, never the default (lowest) one."""
    return 0.0, request.decision.options[-1]


class FakeBot:
    """An outbox that answers requests in-process, after a delay, as its strategy says."""

    def __init__(self, link: EntrantLink, strategy: Strategy = highest) -> None:
        self.link = link
        self.strategy = strategy
        self.requests: list[Request] = []
        self.starts: list[GameInfo] = []
        self.overs: list[tuple[str, int]] = []
        self.closed: str | None = None
        self.notices: list[FaultNotice] = []
        self.accepted: list[bool] = []
        """What :meth:`EntrantLink.answer` said to each answer."""

    def push_start(self, info: GameInfo) -> None:
        self.starts.append(info)

    def push_request(self, request: Request) -> None:
        answer = self.strategy(self, request, len(self.requests))
        self.requests.append(request)
        if answer is not None:
            delay, action = answer
            asyncio.get_running_loop().call_later(delay, self.answer, request.id, action)

    def answer(self, request_id: int, action: Action) -> None:
        self.accepted.append(self.link.answer(request_id, action))

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        pass

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None:
        self.overs.append((match_id, seat))

    def push_fault(self, notice: FaultNotice) -> None:
        self.notices.append(notice)

    def close(self, reason: str) -> None:
        self.closed = reason


def play(
    strategy: Strategy | None,
    *,
    decision_ms: int = 100,
    bank_ms: int = 300,
    connect_ms: int = 1000,
    max_faults: int = 25,
    before: Callable[[EntrantLink], None] | None = None,
) -> tuple[MatchReport, FakeBot | None, FakeBot, float]:
    """Play a match of seat 0 (``strategy``; ``None``: never connects) against a prompt seat 1.

    Returns the report, both fake bots and the wall time in seconds.
    """

    async def main() -> tuple[MatchReport, FakeBot | None, FakeBot, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        links = [EntrantLink(name, f"token-{name}", start + connect_ms / 1000) for name in ("bad", "good")]
        driver = MatchDriver(
            "m1",
            make_variant("classic", {"players": 2, "hands": 1, "target": None}),
            7,
            links,
            time_control=TimeControl(decision_ms, bank_ms, connect_ms),
            policy=FaultPolicy(max_faults=max_faults),
        )
        bad = None if strategy is None else FakeBot(links[0], strategy)
        if bad is not None:
            links[0].attach(bad)
        good = FakeBot(links[1])
        links[1].attach(good)
        if before is not None:
            before(links[0])
        report = await asyncio.wait_for(driver.run(), 30)
        return report, bad, good, loop.time() - start

    return asyncio.run(main())


def card_requests(bot: FakeBot) -> list[Request]:
    return [r for r in bot.requests if r.decision.kind is DecisionKind.CARD]


def seat_actions(report: MatchReport, seat: int) -> list[Any]:
    return [action for step in report.transcript.steps for s, action in step if s == seat]


def assert_good_seat_untouched(report: MatchReport, good: FakeBot, bank_ms: int = 300) -> None:
    stats = report.seats[1]
    assert (stats.faults, stats.defaulted, stats.forfeited) == ({}, 0, False)
    assert stats.decisions == len(good.requests)
    assert {r.bank_ms for r in good.requests} == {bank_ms}
    assert good.closed == "all games over"


def test_late_answers_spend_the_bank_and_an_exhausted_bank_is_a_timeout() -> None:
    def slow(bot: FakeBot, request: Request, number: int) -> Answer:
        # 0.5 s: 0.3 s over the decision time, paid from the 0.4 s bank; then 0.6 s, more than
        # the 0.2 s + what is left: a timeout, and the answer that comes later is ignored while
        # the game goes on at 0.1 s a decision.
        delays = {0: 0.5, 1: 0.6}
        return delays.get(number, 0.1), request.decision.options[-1]

    report, bad, good, _ = play(slow, decision_ms=200, bank_ms=400)
    assert bad is not None
    banks = [r.bank_ms for r in bad.requests]
    assert banks[0] == 400
    assert 0 < banks[1] <= 100
    assert banks[2:] == [0] * (len(banks) - 2)  # a timeout empties the bank
    stats = report.seats[0]
    assert stats.faults == {FaultKind.TIMEOUT: 1}
    assert bad.accepted.count(False) == 1  # the late answer, refused without a fault
    assert (stats.defaulted, stats.decisions) == (1, len(bad.requests) - 1)
    assert stats.think_seconds >= 0.5 + 0.2 + banks[1] / 1000
    actions = seat_actions(report, 0)
    cards = card_requests(bad)
    assert actions[0] == max(cards[0].decision.options)
    assert actions[1] == min(cards[1].decision.options)  # the default: the lowest card
    assert_good_seat_untouched(report, good, bank_ms=400)


def test_an_illegal_action_is_a_fault_and_gets_the_default() -> None:
    def illegal_first(bot: FakeBot, request: Request, number: int) -> Answer:
        return 0.0, 999 if number == 0 else request.decision.options[-1]

    report, bad, good, _ = play(illegal_first)
    assert bad is not None
    stats = report.seats[0]
    assert stats.faults == {FaultKind.ILLEGAL: 1}
    assert (stats.defaulted, stats.decisions) == (1, len(bad.requests) - 1)
    assert seat_actions(report, 0)[0] == min(bad.requests[0].decision.options)
    assert_good_seat_untouched(report, good)


def test_a_reply_without_an_action_is_illegal() -> None:
    def reject_first(bot: FakeBot, request: Request, number: int) -> Answer:
        if number == 0:
            asyncio.get_running_loop().call_soon(bot.link.reject, request.id, FaultKind.ILLEGAL)
            return None
        return highest(bot, request, number)

    report, _, _, _ = play(reject_first)
    assert report.seats[0].faults == {FaultKind.ILLEGAL: 1}
    assert report.seats[0].defaulted == 1


def test_more_faults_than_the_policy_allows_forfeit_the_seat() -> None:
    report, bad, good, _ = play(lambda bot, request, number: (0.0, 999), max_faults=2)
    assert bad is not None
    stats = report.seats[0]
    # Three illegal answers exceed two faults; every later decision is defaulted unasked.
    assert len(bad.requests) == 3
    assert stats.faults == {FaultKind.ILLEGAL: 3}
    assert stats.forfeited
    assert stats.decisions == 0
    assert stats.defaulted == len(seat_actions(report, 0))
    assert_good_seat_untouched(report, good)


def test_replies_to_requests_the_connection_was_not_sent_are_charged_to_no_seat() -> None:
    def bogus_replies(link: EntrantLink) -> None:
        for _ in range(3):
            assert not link.answer(123_456_789, 1)  # no such request: told, not charged

    report, bad, _, _ = play(highest, max_faults=2, before=bogus_replies)
    assert bad is not None
    assert report.seats[0].faults == {}
    assert not report.seats[0].forfeited
    strays = [n for n in bad.notices if n.request_id == 123_456_789]
    assert len(strays) == 3
    assert {(n.kind, n.match_id, n.seat) for n in strays} == {(FaultKind.PROTOCOL, "", -1)}
    assert "not sent" in strays[0].reason


def test_a_flood_of_stray_replies_is_flagged() -> None:
    link = EntrantLink("bad", "token", 0.0)
    for number in range(MAX_STRAYS + 1):
        assert not link.flooded
        link.answer(10**9 + number, 1)
    assert link.flooded


def test_protocol_faults_forfeit_too() -> None:
    def thrice(bot: FakeBot, request: Request, number: int) -> Answer:
        if number == 0:
            for _ in range(3):
                asyncio.get_running_loop().call_soon(
                    bot.link.answer, request.id, request.decision.options[-1]
                )
        return highest(bot, request, number)

    report, bad, _, _ = play(thrice, max_faults=2)
    assert bad is not None
    assert report.seats[0].faults == {FaultKind.PROTOCOL: 3}
    assert report.seats[0].forfeited
    assert len(bad.requests) == 1


def test_a_second_answer_to_a_request_is_a_protocol_fault() -> None:
    def twice(bot: FakeBot, request: Request, number: int) -> Answer:
        if number < 2:
            # right after the first answer, while the game is still on
            asyncio.get_running_loop().call_soon(bot.link.answer, request.id, request.decision.options[-1])
        return highest(bot, request, number)

    report, bad, _, _ = play(twice)
    assert bad is not None
    stats = report.seats[0]
    assert stats.faults == {FaultKind.PROTOCOL: 2}
    assert (stats.defaulted, stats.decisions) == (0, len(bad.requests))


def test_a_seat_that_never_connects_is_defaulted_after_the_connect_window() -> None:
    report, _, good, elapsed = play(None, connect_ms=300)
    stats = report.seats[0]
    assert stats.faults == {FaultKind.DISCONNECT: 1}  # once, not once per decision
    assert stats.decisions == 0
    assert stats.defaulted == len(seat_actions(report, 0))
    assert 0.3 <= elapsed < 5
    assert_good_seat_untouched(report, good)


def test_a_crash_defaults_the_pending_request_and_the_rest() -> None:
    def crash_third(bot: FakeBot, request: Request, number: int) -> Answer:
        if number == 2:
            asyncio.get_running_loop().call_soon(bot.link.detach, FaultKind.CRASH)
            return None
        return highest(bot, request, number)

    report, bad, good, _ = play(crash_third)
    assert bad is not None
    stats = report.seats[0]
    assert stats.faults == {FaultKind.CRASH: 1}
    assert len(bad.requests) == 3  # nobody asks a crashed bot
    assert stats.decisions == 2
    assert stats.defaulted == len(seat_actions(report, 0)) - 2
    assert_good_seat_untouched(report, good)


def test_a_bot_that_reconnects_gets_its_games_again_and_plays_on() -> None:
    fresh: list[FakeBot] = []

    def reconnect(link: EntrantLink) -> None:
        link.detach(FaultKind.CRASH)
        bot = FakeBot(link)
        fresh.append(bot)
        assert link.attach(bot) == [("m1", 0)]

    def crash_second(bot: FakeBot, request: Request, number: int) -> Answer:
        if number == 1:
            asyncio.get_running_loop().call_soon(reconnect, bot.link)
            return None
        return highest(bot, request, number)

    report, bad, _, _ = play(crash_second)
    assert bad is not None
    (again,) = fresh
    assert [(s.match_id, s.seat) for s in again.starts] == [("m1", 0)]
    assert again.requests, "the new connection is asked"
    stats = report.seats[0]
    assert stats.faults == {FaultKind.CRASH: 1}
    assert (stats.decisions, stats.defaulted) == (1 + len(again.requests), 1)
    assert again.overs == [("m1", 0)]
    assert bad.overs == []


def test_each_fault_has_a_reason_is_told_to_the_bot_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    def slow_then_illegal(bot: FakeBot, request: Request, number: int) -> Answer:
        if number == 0:
            return 0.6, request.decision.options[-1]  # past 0.2 s + the 0.3 s bank: a timeout
        if number == 1:
            return 0.0, 999  # not a card of its hand
        return highest(bot, request, number)

    with caplog.at_level(logging.INFO, logger="referee.faults"):
        report, bad, _, _ = play(slow_then_illegal, decision_ms=200, bank_ms=300)
    assert bad is not None
    stats = report.seats[0]
    assert stats.faults == {FaultKind.TIMEOUT: 1, FaultKind.ILLEGAL: 1}
    timeout_reason = "no answer within 200 ms and the 300 ms left in the time bank"
    (illegal_reason,) = [r for k, r in stats.reasons if k is FaultKind.ILLEGAL]
    assert stats.reasons == {(FaultKind.TIMEOUT, timeout_reason): 1, (FaultKind.ILLEGAL, illegal_reason): 1}
    assert illegal_reason.startswith("999 is not a legal card decision (options: ")
    first, second = bad.requests[:2]
    assert bad.notices == [
        FaultNotice(FaultKind.TIMEOUT, "m1", 0, first.id, timeout_reason),
        FaultNotice(FaultKind.ILLEGAL, "m1", 0, second.id, illegal_reason),
    ]
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "referee.faults"]
    assert [line for line in lines if line["match"] == "m1"] == [
        {"event": "fault", "match": "m1", "seat": 0, "entrant": "bad", "kind": "timeout",
         "request": first.id, "reason": timeout_reason},
        {"event": "fault", "match": "m1", "seat": 0, "entrant": "bad", "kind": "illegal",
         "request": second.id, "reason": illegal_reason},
    ]  # fmt: skip
    assert "token" not in caplog.text


def test_matches_waiting_for_a_first_connection_are_cancelled_alone_and_all_go_on_at_attach() -> None:
    """Each waiting match has its own future: cancelling many (a referee shutting down) takes each
    out of the link at once and leaves the others waiting; the first attach wakes all of them."""

    class Outbox:
        def push_start(self, info: Any) -> None: ...
        def push_request(self, request: Any) -> None: ...
        def push_events(self, match_id: str, step: int, events: Any) -> None: ...
        def push_over(self, match_id: str, seat: int, outcome: Any) -> None: ...
        def push_fault(self, notice: Any) -> None: ...
        def close(self, reason: str) -> None: ...

    async def main() -> None:
        loop = asyncio.get_running_loop()
        link = EntrantLink("a", "token", loop.time() + 60)
        waiting = [asyncio.ensure_future(link.wait_attached()) for _ in range(3000)]
        await asyncio.sleep(0)
        assert len(link._waiters or ()) == 3000
        for task in waiting[:2000]:
            task.cancel()
        await asyncio.gather(*waiting[:2000], return_exceptions=True)
        assert len(link._waiters or ()) == 1000  # the cancelled ones are gone, the rest wait on
        assert not any(task.done() for task in waiting[2000:])
        link.attach(Outbox())
        assert await asyncio.gather(*waiting[2000:]) == [True] * 1000
        assert not link._waiters and await link.wait_attached()

    asyncio.run(main())


def test_a_match_waiting_for_a_bot_that_never_comes_goes_on_when_the_window_ends() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        link = EntrantLink("a", "token", loop.time() + 0.05)
        assert await asyncio.gather(link.wait_attached(), link.wait_attached()) == [False, False]
        assert not await link.wait_attached()

    asyncio.run(main())
