"""Sending a block reads its bots' holders, not every worker's warm set (issue 34, docs/capacity.md).

``workers.queue.routing`` keeps, beside each worker's set of warm bot versions, each bot version's
holders (a sorted set scored by when each hold runs out), so :func:`routing.queue_for` asks one
command a bot version and a queue length per candidate, however many workers there are. The
choice is the one it made before: the live worker holding the most of the block's bots, the
shorter queue among equals, none with ``DEPTH`` blocks waiting. Real Redis.
"""

from __future__ import annotations

from typing import Any

import pytest
from testkit import wait_for

from workers.queue import routing

BOTS = ["a" * 64, "b" * 64, "c" * 64, "d" * 64]


def _client(redis_url: str) -> Any:
    client = routing._client(redis_url)
    assert client is not None
    return client


def _fill(redis_url: str, worker: str, count: int) -> None:
    """``count`` messages waiting in ``worker``'s own queue (what its length counts)."""
    _client(redis_url).rpush(routing.worker_queue(worker), *[b"message"] * count)


def test_a_block_goes_to_the_live_worker_holding_most_of_its_bots(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_scan(client: Any) -> Any:
        raise AssertionError("sending a block read every worker's set")

    # Many workers hold other bots: they are never read when sending.
    for i in range(200):
        routing.publish(f"other{i}@h", [f"{i:064x}"], broker_url=redis_url)
    routing.publish("w1@h", BOTS, broker_url=redis_url)
    routing.publish("w2@h", BOTS[:2], broker_url=redis_url)
    monkeypatch.setattr(routing, "live_workers", no_scan)

    assert routing.queue_for(BOTS, broker_url=redis_url) == routing.worker_queue("w1@h")
    assert routing.queue_for(BOTS, broker_url=redis_url, avoid="w1@h") == routing.worker_queue("w2@h")
    assert routing.queue_for(["e" * 64], broker_url=redis_url) == routing.SHARED
    # A worker with DEPTH blocks waiting gets no more; then the next one; then the shared queue.
    _fill(redis_url, "w1@h", routing.DEPTH)
    assert routing.queue_for(BOTS, broker_url=redis_url) == routing.worker_queue("w2@h")
    _fill(redis_url, "w2@h", routing.DEPTH)
    assert routing.queue_for(BOTS, broker_url=redis_url) == routing.SHARED


def test_equals_go_to_the_shorter_queue(redis_url: str) -> None:
    routing.publish("w1@h", BOTS[:2], broker_url=redis_url)
    routing.publish("w2@h", BOTS[:2], broker_url=redis_url)
    _fill(redis_url, "w1@h", 1)
    assert routing.queue_for(BOTS, broker_url=redis_url) == routing.worker_queue("w2@h")
    _fill(redis_url, "w2@h", 1)
    # Equal in bots and queue: the first by name, as before.
    assert routing.queue_for(BOTS, broker_url=redis_url) == routing.worker_queue("w1@h")


def test_bots_a_worker_no_longer_holds_route_nothing_to_it(redis_url: str) -> None:
    routing.publish("w1@h", BOTS, broker_url=redis_url)
    routing.publish("w2@h", BOTS[:1], broker_url=redis_url)
    routing.publish("w1@h", BOTS[2:], broker_url=redis_url)  # its pool let the first two go
    assert routing.queue_for(BOTS[:2], broker_url=redis_url) == routing.worker_queue("w2@h")
    routing.publish("w2@h", [], broker_url=redis_url)
    assert routing.queue_for(BOTS[:2], broker_url=redis_url) == routing.SHARED
    assert routing.live_workers(_client(redis_url)) == {"w1@h": set(BOTS[2:])}


def test_a_hold_runs_out_unless_its_worker_renews_it(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIXNIMMT_WARM_ROUTE_S", "1")
    routing.publish("gone@h", BOTS, broker_url=redis_url)
    routing.publish("kept@h", BOTS[:1], broker_url=redis_url)
    monkeypatch.setenv("SIXNIMMT_WARM_ROUTE_S", "60")
    routing.keep_alive("kept@h", broker_url=redis_url)

    def ran_out() -> bool:
        gone = not _client(redis_url).exists(routing.KEY + "gone@h")
        return gone and routing.queue_for(BOTS, broker_url=redis_url) == routing.worker_queue("kept@h")

    # The dead worker's hold runs out (its set and its places among the bots' holders), the
    # renewed one does not.
    wait_for(ran_out, 60, "the unrenewed hold to run out")
    assert set(routing.live_workers(_client(redis_url))) == {"kept@h"}
