"""The start of a process of the local pool, which plays league blocks (``workers.league.run_local``).

A module of its own, importing nothing of the driver: the pool's processes are spawned, and each
imports its initializer's module before anything else, so the referee's compiled hot path
(:func:`referee.accel.enable`, ``SIXNIMMT_COMPILED``) can still be chosen here, before the first
block imports the driver.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from referee import accel


def start() -> None:
    """A local pool process: Ctrl-C is for the parent, which stops the pool with SIGTERM; the
    referee it runs for its blocks takes the compiled build if it may (checked by the parent
    already under ``require``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, stop_playing)
    accel.enable()


def stop_playing(signum: int, frame: Any) -> None:
    """A pool process told to stop: kill its bots, remove its directories, exit at once.

    Not ``SystemExit``: :mod:`concurrent.futures` catches it as the task's result and the process
    takes the next queued task, which then ran on the warm pool just removed and failed its block
    (``FileNotFoundError``). Exiting here fails nothing: the blocks in play keep their claims, which
    ``run_local`` gives back (or their leases run out), and any store transaction is rolled back.
    """
    # The players, as in _play_some: a pool process that played has them loaded already.
    from workers.play import warm
    from workers.play.lease import ProcessGroup, remove_own

    try:
        ProcessGroup.kill_all()  # the blocks in play end at once
        pool = warm.current()
        if pool is not None:
            pool.abandon()  # its bots are killed already; its directory goes now
        remove_own()  # the fresh blocks' directories, whose ``with`` will not run
    finally:
        os._exit(128 + signum)
