"""The steps' deadlines in one queue per loop (referee.driver.clock): each one at its time, in
order, cancelled ones never, out-of-order ones on a timer of their own; one loop timer at a time."""

from __future__ import annotations

import asyncio

from referee.driver.clock import COMPACT_AT, Deadlines, deadlines


def test_deadlines_fire_in_order_and_cancelled_ones_never() -> None:
    async def main() -> tuple[list[str], Deadlines]:
        loop = asyncio.get_running_loop()
        queue = deadlines(loop)
        assert deadlines(loop) is queue
        fired: list[str] = []
        done = loop.create_future()
        now = loop.time()
        queue.at(now + 0.01, lambda: fired.append("a"))
        cancelled = queue.at(now + 0.02, lambda: fired.append("cancelled"))
        queue.at(now + 0.03, lambda: fired.append("c"))
        early = queue.at(now + 0.015, lambda: fired.append("early"))  # before the last: own timer
        assert isinstance(early, asyncio.TimerHandle)
        queue.at(now + 0.04, lambda: done.set_result(None))
        cancelled.cancel()
        await done
        return fired, queue

    fired, queue = asyncio.run(main())
    assert fired == ["a", "early", "c"]
    assert not queue.queue and queue.dead == 0 and queue.timer is None


def test_a_deadline_added_by_a_callback_and_a_failing_callback_leave_the_others_on_time() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: fired.append("handled"))
        queue = deadlines(loop)
        fired: list[str] = []
        done = loop.create_future()

        def again() -> None:
            fired.append("first")
            queue.at(loop.time() + 0.01, lambda: done.set_result(None))

        def boom() -> None:
            raise RuntimeError("boom")

        now = loop.time()
        queue.at(now + 0.005, boom)
        queue.at(now + 0.006, again)
        await done
        return fired

    assert asyncio.run(main()) == ["handled", "first"]


def test_cancelled_entries_are_dropped_when_they_are_most_of_the_queue() -> None:
    async def main() -> Deadlines:
        loop = asyncio.get_running_loop()
        queue = Deadlines(loop)
        far = loop.time() + 3600
        entries = [queue.at(far + i, lambda: None) for i in range(COMPACT_AT * 2 + 10)]
        for entry in entries[: COMPACT_AT * 2]:
            entry.cancel()
        return queue

    queue = asyncio.run(main())
    assert len(queue.queue) <= COMPACT_AT + 10 and queue.dead <= COMPACT_AT
