"""One referee process for the session's referee tests, and bot processes that never outlive a test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from refkit import Processes

from arena.matches import RefereeClient, local_referee


@pytest.fixture(scope="session")
def referee() -> Iterator[RefereeClient]:
    """``sixnimmt referee serve`` on a private socket, stopped after the last test."""
    with local_referee() as client:
        yield client


@pytest.fixture
def bots(referee: RefereeClient) -> Iterator[Processes]:
    """Starts bot processes for a test and kills any still running when it ends."""
    processes = Processes(referee)
    try:
        yield processes
    finally:
        processes.close()
