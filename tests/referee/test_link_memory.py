"""What a link remembers of requests stays bounded: a standing connection lives for days."""

from __future__ import annotations

import asyncio

from referee.driver.links import RECENT_IDS, EntrantLink, Request, Step
from referee.rules.core import Decision, DecisionKind


def test_timed_out_request_ids_are_forgotten_with_the_recent_ones() -> None:
    async def run() -> EntrantLink:
        link = EntrantLink("bot", "token", connect_deadline=0.0)
        step = Step()
        for number in range(1, RECENT_IDS + 101):
            decision = Decision(0, DecisionKind.CARD, (1,))
            link.pending[number] = Request(number, "m", 0, decision, None, 1, 0, step)  # type: ignore[arg-type]
            link.forget(number)  # timed out; never answered late
        return link

    link = asyncio.run(run())
    assert len(link.recent) == RECENT_IDS
    assert link.expired <= set(link.recent) and len(link.expired) == RECENT_IDS
    assert 1 not in link.expired and RECENT_IDS + 100 in link.expired
