"""The Celery app ``workers.queue.app``: Redis broker from ``SIXNIMMT_BROKER_URL``, results in the store.

A worker needs that setting: without it, it stops with one line (exit status 2) rather than
take another deployment's messages from some default broker. What it then plays is only its
own store's started leagues (:mod:`workers.queue.messages`).

Tasks take ids, are idempotent and acknowledged late, so a worker that dies mid-block has its
block delivered again; ``SIXNIMMT_VISIBILITY_TIMEOUT_S`` bounds how long Redis waits before it
hands an unacknowledged block to another worker.

Each worker's main process also reconciles the started leagues (:mod:`workers.queue.reconcile`) from
the moment it is ready, and on SIGTERM lets its blocks finish for ``SIXNIMMT_SHUTDOWN_GRACE_S``
before it releases what is left and stops.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import Any

from celery import Celery, signals

from referee.settings import load as load_settings

_KEEPALIVE = {
    getattr(socket, name): value
    for name, value in (
        ("TCP_KEEPIDLE", 10),
        ("TCP_KEEPINTVL", 5),
        ("TCP_KEEPCNT", 3),
        ("TCP_USER_TIMEOUT", 15_000),
    )
    if hasattr(socket, name)
}
"""Dead-peer detection on the broker connection: idle probes after 10 s, and unacknowledged data
for 15 s ends it (Linux)."""


NO_BROKER = (
    "a worker takes its blocks from a broker: set SIXNIMMT_BROKER_URL (e.g. redis://HOST:6379/0)"
    " to the broker its store's leagues are started on"
)
"""Why a worker without a broker setting stops (``sixnimmt worker`` and ``celery worker`` alike)."""


def make_app() -> Celery:
    """Build the app from the settings (no broker without ``SIXNIMMT_BROKER_URL``: no default)."""
    settings = load_settings()
    broker = settings.broker_url or None
    # Every task's runs, retries and durations are counted and logged by one base class.
    app = Celery(
        "sixnimmt", broker=broker, include=["workers.queue.tasks"], task_cls="workers.metrics:ObservedTask"
    )
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout_s,
            # Redis looks for blocks of dead workers every interval x throttle seconds (kombu's
            # default: 10 x 10 s); sweep often enough that the visibility timeout is what bounds
            # how long a dead worker's block waits.
            "unacked_restore_interval": max(1, min(10, settings.visibility_timeout_s // 10)),
            "unacked_restore_throttle": 1,
            # A broker link that stops answering fails the connection within seconds (and the
            # worker reconnects) instead of waiting out TCP's retransmission backoff.
            "socket_keepalive": True,
            "socket_keepalive_options": _KEEPALIVE,
        },
        task_default_queue="sixnimmt-blocks",
    )
    return app


app = make_app()


@signals.celeryd_init.connect
def _refuse_without_broker(**_: Any) -> None:
    """A worker started without a broker setting stops here, before it connects anywhere."""
    if not load_settings().broker_url:
        print(f"sixnimmt: error: {NO_BROKER}", file=sys.stderr)
        raise SystemExit(2)


@signals.worker_init.connect
def _share_refusal_log(**_: Any) -> None:
    """Before the pool processes are forked: they log each kind of refused message once for the
    whole worker (workers.queue.messages.RefusalLog)."""
    from workers.queue import messages

    messages.share_refusal_log()


@signals.celeryd_after_setup.connect
def _consume_own_queue(sender: Any = None, instance: Any = None, **_: Any) -> None:
    """Each worker also takes the blocks routed to it, where its bots are warm (workers.queue.routing)."""
    from workers.queue.routing import worker_queue

    if sender and instance is not None:
        instance.app.amqp.queues.select_add(worker_queue(str(sender)))


@signals.worker_ready.connect
def _start_reconciling(sender: Any = None, **_: Any) -> None:
    from workers.queue import reconcile

    reconcile.start_for_worker(str(getattr(sender, "hostname", None) or "worker"))


@signals.worker_shutting_down.connect
def _release_when_late(sender: Any = None, how: str = "", **_: Any) -> None:
    from workers.queue import reconcile

    reconcile.stop_current()
    if how == "Warm":
        # Past the grace period, give the blocks still in play back and stop cold (SIGQUIT).
        reconcile.release_on_shutdown(
            str(sender), load_settings().shutdown_grace_s, lambda: os.kill(os.getpid(), signal.SIGQUIT)
        )
