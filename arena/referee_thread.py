"""A referee inside this process, on its own event-loop thread, listening on a Unix socket.

The league's workers play each block through one (:mod:`workers.play.execute`); it is the platform's,
so the league starts a referee without importing the referee server.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.matches import RefereeClient
from referee.server.app import start_referee
from referee.settings import load as load_settings


@contextmanager
def referee_in_thread(directory: Path) -> Iterator[RefereeClient]:
    """Serve a referee on ``directory/referee.sock`` until the block leaves."""
    socket = directory / "referee.sock"
    address = f"unix:{socket}"
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="referee", daemon=True)
    thread.start()
    running = asyncio.run_coroutine_threadsafe(start_referee(address, load_settings()), loop).result(30)
    # Sandboxed bots run as other users and get the socket bound into their own root
    # (workers.sandbox): they must be able to connect to it; its directory stays closed.
    os.chmod(socket, 0o777)
    client = RefereeClient(address, admin_token=running.admin_token)
    try:
        client.wait_serving()
        yield client
    finally:
        client.close()
        asyncio.run_coroutine_threadsafe(running.stop(0.5), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
