"""What a Celery worker of the league does besides playing blocks: its signal hooks.

:mod:`workers.queue.app` names this module in ``include``, so Celery imports it as a worker
starts (``loader.init_worker()``), before it sends ``worker_init``, ``celeryd_after_setup`` and
``worker_ready``. A worker:

- shares one log of refused messages among its pool processes (before they are forked);
- consumes its own queue besides the shared one (:mod:`workers.queue.routing`), and the API's
  validations' (:mod:`workers.queue.validations`);
- from the moment it is ready, runs the reconciliation in its main process
  (:class:`workers.queue.reconcile.Reconciler`, sending with :func:`workers.queue.tasks.send_block`);
- on SIGTERM lets its blocks finish for ``SIXNIMMT_SHUTDOWN_GRACE_S``, then releases what is left
  and stops.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from celery import signals

from referee.settings import load as load_settings
from workers.queue import messages
from workers.queue.reconcile import Reconciler
from workers.queue.routing import worker_queue
from workers.queue.tasks import send_block
from workers.queue.validations import QUEUE as VALIDATIONS_QUEUE
from workers.store import repo
from workers.store.engine import make_engine

log = logging.getLogger(__name__)

_current: Reconciler | None = None


def start_reconciler(name: str) -> Reconciler:
    """Start this worker's reconciler (from the ``worker_ready`` signal); one per process."""
    global _current
    settings = load_settings()
    if _current is None:
        _current = Reconciler(
            name,
            engine=make_engine(),
            broker_url=settings.broker_url,
            send=send_block,
            period_s=settings.reconcile_s,
        ).start()
    return _current


def stop_reconciler() -> None:
    if _current is not None:
        _current.stop()


def release_on_shutdown(name: str, grace_s: float, stop: Callable[[], None]) -> threading.Timer:
    """After ``grace_s``, give back the blocks this worker (``name``) still plays, then ``stop()`` it.

    Started when the worker is told to stop (SIGTERM): a block that finishes in time is stored and
    acknowledged; one that does not is released for another worker at once rather than when its
    lease runs out.
    """

    def release() -> None:
        with contextlib.suppress(Exception):
            if _current is not None:
                released = repo.release_claims(_current.engine, name)
                if released:
                    log.warning("shutdown: released blocks %s after %.0f s", released, grace_s)
        stop()

    timer = threading.Timer(grace_s, release)
    timer.daemon = True
    timer.start()
    return timer


@signals.worker_init.connect
def _share_refusal_log(**_: Any) -> None:
    """Before the pool processes are forked: they log each kind of refused message once for the
    whole worker (workers.queue.messages.RefusalLog)."""
    messages.share_refusal_log()


@signals.celeryd_after_setup.connect
def _consume_own_queue(sender: Any = None, instance: Any = None, **_: Any) -> None:
    """Each worker also takes the blocks routed to it, where its bots are warm (workers.queue.routing),
    and the API's validations."""
    if sender and instance is not None:
        instance.app.amqp.queues.select_add(worker_queue(str(sender)))
        # And the validations of the bots uploaded through the API (workers.queue.validations).
        instance.app.amqp.queues.select_add(VALIDATIONS_QUEUE)


@signals.worker_ready.connect
def _start_reconciling(sender: Any = None, **_: Any) -> None:
    start_reconciler(str(getattr(sender, "hostname", None) or "worker"))


@signals.worker_process_shutdown.connect
def _remove_own_directories(**_: Any) -> None:
    """A pool process that stops (it leaves with ``os._exit``: no ``atexit``) kills its warm bots and
    removes its warm pool's and blocks' directories first."""
    # The players: loaded in a pool process that played; nothing to do in one that did not.
    from workers.play import lease, warm

    with contextlib.suppress(Exception):
        pool = warm.current()
        if pool is not None:
            pool.abandon()
        lease.remove_own()


@signals.worker_shutdown.connect
def _sweep_after_the_pool(**_: Any) -> None:
    """Once the pool is stopped (warm or cold), the main process removes what its dead pool
    processes left in the temporary directory (one killed outright cannot clean up itself)."""
    from workers.play import lease

    with contextlib.suppress(Exception):
        lease.sweep()


@signals.worker_shutting_down.connect
def _release_when_late(sender: Any = None, how: str = "", **_: Any) -> None:
    stop_reconciler()
    if how == "Warm":
        # Past the grace period, give the blocks still in play back and stop cold (SIGQUIT).
        release_on_shutdown(
            str(sender), load_settings().shutdown_grace_s, lambda: os.kill(os.getpid(), signal.SIGQUIT)
        )
