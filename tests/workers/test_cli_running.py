"""Ctrl-C while following a league is never lost, even when Python drops the KeyboardInterrupt.

A ``KeyboardInterrupt`` raised while a weakref callback runs (SQLAlchemy's event registry has
some) is printed as "Exception ignored" and dropped; ``league run`` once followed a league on
for good after such a Ctrl-C. :func:`workers.cli.running.keep_interrupts` keeps it as a flag that
the follower asks at every poll.
"""

from __future__ import annotations

import os
import signal
import sys
import weakref
from typing import Any

import pytest

from workers.cli import running
from workers.queue import runner


class _Thing:
    pass


def test_an_interrupt_python_drops_in_a_weakref_callback_is_kept_and_not_printed() -> None:
    before, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    dropped: list[Any] = []
    sys.unraisablehook = dropped.append  # what Python would print as "Exception ignored in"
    try:
        with running.keep_interrupts() as interrupted:
            assert not interrupted()
            thing = _Thing()
            ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), signal.SIGINT))
            del thing  # the callback runs, the handler raises inside it: Python cannot propagate it
            assert ref() is None
            assert interrupted()
            other = _Thing()
            ref = weakref.ref(other, lambda _: 1 / 0)  # any other unraisable error is still reported
            del other
        assert [u.exc_type for u in dropped] == [ZeroDivisionError]
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        sys.unraisablehook = hook
    assert sys.unraisablehook is hook


def test_following_stops_at_the_next_poll_once_interrupted() -> None:
    # Asked before the store is read: no engine is touched.
    with pytest.raises(KeyboardInterrupt):
        runner.run_celery(None, None, interrupted=lambda: True, send=lambda message: None)  # type: ignore[arg-type]
