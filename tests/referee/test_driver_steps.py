"""The driver plays a step on from the delivery of its last answer: no future per step.

Before, every step of every match made a future that the match's coroutine awaited (and the
task's wake-up that goes with it); now a match's coroutine sleeps once while the answers'
callbacks play the steps, so a whole game costs a handful of futures however long it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from referee.driver import EntrantLink, FaultNotice, GameInfo, MatchDriver, Request, TimeControl
from referee.rules.core import Event, Outcome
from referee.rules.registry import make_variant
from referee.rules.transcript import Playthrough


class Prompt:
    """An outbox that answers every request on the next turn of the loop with its last option."""

    def __init__(self, link: EntrantLink) -> None:
        self.link = link
        self.requests = 0

    def push_start(self, info: GameInfo) -> None:
        pass

    def push_request(self, request: Request) -> None:
        self.requests += 1
        asyncio.get_running_loop().call_soon(self.link.answer, request.id, request.decision.options[-1])

    def push_events(self, match_id: str, step: int, events: Sequence[Event]) -> None:
        pass

    def push_over(self, match_id: str, seat: int, outcome: Outcome) -> None:
        pass

    def push_fault(self, notice: FaultNotice) -> None:
        pass

    def close(self, reason: str) -> None:
        pass


class CountingLoop(asyncio.SelectorEventLoop):
    futures = 0

    def create_future(self) -> asyncio.Future[Any]:
        CountingLoop.futures += 1
        return super().create_future()


def test_a_whole_game_makes_a_few_futures_not_one_per_step() -> None:
    config = {"players": 4, "hands": 2, "target": None}

    async def main() -> tuple[Any, int, int]:
        loop = asyncio.get_running_loop()
        links = [EntrantLink(f"b{seat}", f"t{seat}", loop.time() + 10) for seat in range(4)]
        driver = MatchDriver(
            "m", make_variant("classic", config), 11, links, time_control=TimeControl(2000, 0, 1000)
        )
        bots = [Prompt(link) for link in links]
        for link, bot in zip(links, bots, strict=True):
            link.attach(bot)
        before = CountingLoop.futures
        report = await driver.run()
        return report, CountingLoop.futures - before, sum(bot.requests for bot in bots)

    loop = CountingLoop()
    try:
        report, futures, requests = loop.run_until_complete(main())
    finally:
        loop.close()
    steps = [step for step in report.transcript.steps if step[0][0] != -1]
    assert len(steps) >= 20 and requests >= 80
    assert futures <= 3, f"{futures} futures for {len(steps)} steps"
    # The same game as the engine plays it with the same actions: the transcript is unchanged.
    game = Playthrough(make_variant("classic", config), 11)
    while pending := game.pending():
        if pending[0].seat == -1:
            game.resolve_chance()
        else:
            game.apply({d.seat: d.options[-1] for d in pending})
    assert game.transcript({}).digest() == report.transcript.digest()
