"""Playing a stored league from the command line, here or on Celery, behind a progress bar.

``league run`` and ``bot test`` both use it: :func:`play` runs the league on the local process
pool, or hands it to Celery's workers and follows it when a broker is set (and ``--local`` is not
given); :func:`grow` and :func:`notify` are the progress bar's callbacks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from referee.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from workers.store.repo import League


def on_celery(settings: Settings, *, local: bool) -> bool:
    """Whether a league is handed to Celery's workers: a broker is set and ``--local`` is not given."""
    return bool(settings.broker_url) and not local


def play(
    engine: Engine,
    league: League,
    settings: Settings,
    bar: Any,
    *,
    local: bool,
    processes: int,
    interrupted: Callable[[], bool] | None = None,
) -> dict[str, int]:
    """Play the league's blocks not yet stored, reporting to ``bar``; returns the outcome counts.

    On Celery (:func:`on_celery`) the workers play and this follows them; else a local pool of
    ``processes`` (0: ``$SIXNIMMT_WORKERS`` or the cores). Interrupted, it raises
    ``KeyboardInterrupt`` as the league's runners leave it.
    """
    # The league and its Celery runner load SQLAlchemy and Celery: only once a league is played,
    # not when the root ``sixnimmt`` command line registers its commands.
    from workers import league as leagues
    from workers.queue import runner

    if on_celery(settings, local=local):
        with contextlib.ExitStack() as stack:
            # ``interrupted`` from a caller that keeps Ctrl-C already (from before it said so).
            asked = interrupted or stack.enter_context(keep_interrupts())
            return runner.run_celery(
                engine,
                league,
                progress=bar.update,
                planned=grow(bar),
                notify=notify(bar),
                interrupted=asked,
            )
    pool = processes or settings.workers or os.cpu_count() or 1
    return leagues.run_local(
        engine, league, processes=pool, progress=bar.update, planned=grow(bar), notify=notify(bar)
    )


@contextlib.contextmanager
def keep_interrupts() -> Iterator[Callable[[], bool]]:
    """While following a league, Ctrl-C is kept as well as raised: a ``KeyboardInterrupt`` that
    lands while a weakref callback runs (SQLAlchemy's event registry has some) cannot propagate,
    Python hands it to ``sys.unraisablehook`` and goes on, and following would go on too; the
    flag this yields stops it at the next poll. Such an interrupt is not printed (it is not an
    error: the follower stops for it); any other unraisable exception still is. The previous
    handler and hook are back afterwards."""
    pressed = threading.Event()

    def on_interrupt(signum: int, frame: Any) -> None:
        pressed.set()
        raise KeyboardInterrupt

    hook = sys.unraisablehook

    def quiet_interrupts(unraisable: Any) -> None:
        if not (pressed.is_set() and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            hook(unraisable)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    sys.unraisablehook = quiet_interrupts
    try:
        yield pressed.is_set
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook


def notify(bar: Any) -> Callable[[str], None]:
    """Where following a league reports retries and missing workers: one line on stderr."""

    def say(message: str) -> None:
        bar.write(f"sixnimmt: {message}", file=sys.stderr)

    return say


def grow(bar: Any) -> Callable[[int], None]:
    """A callback that adds a new round's blocks to a progress bar's total."""

    def add(blocks: int) -> None:
        bar.total = (bar.total or 0) + blocks
        bar.refresh()

    return add
