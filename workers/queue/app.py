"""The Celery app ``workers.queue.app``: Redis broker from ``SIXNIMMT_BROKER_URL``, results in the store.

A worker needs that setting: without it, it stops with one line (exit status 2) rather than
take another deployment's messages from some default broker. What it then plays is only its
own store's started leagues (:mod:`workers.queue.messages`).

Tasks take ids, are idempotent and acknowledged late, so a worker that dies mid-block has its
block delivered again; ``SIXNIMMT_VISIBILITY_TIMEOUT_S`` bounds how long Redis waits before it
hands an unacknowledged block to another worker.

What a worker does besides playing (reconcile the started leagues from the moment it is ready,
consume its own queue, release its blocks on SIGTERM past ``SIXNIMMT_SHUTDOWN_GRACE_S``) is
:mod:`workers.queue.worker`, which ``include`` names: Celery imports it when a worker starts,
before it sends the signals that module listens to. This module only builds the app and refuses
a worker without a broker.
Besides the blocks, a worker validates the bots uploaded through the API
(:mod:`workers.queue.validations`, on a queue of their own).
"""

from __future__ import annotations

import os
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
        "sixnimmt",
        broker=broker,
        include=["workers.queue.tasks", "workers.queue.validations", "workers.queue.worker"],
        task_cls="workers.metrics:ObservedTask",
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


NODE_NAME = "sixnimmt-{pid}@{host}"
"""``sixnimmt worker``'s node name when none is given (``--hostname``): unique per process, so two
workers on one host are two nodes (Celery's own default, ``celery@HOST``, is the same for both).
A worker started as ``celery -A workers.queue.app worker`` keeps Celery's default."""


def default_node_name() -> str:
    """This process's node name when none is given (:data:`NODE_NAME`)."""
    return NODE_NAME.format(pid=os.getpid(), host=socket.gethostname())


@signals.celeryd_init.connect
def _refuse_without_broker(**_: Any) -> None:
    """A worker started without a broker setting stops here, before it connects anywhere."""
    if not load_settings().broker_url:
        print(f"sixnimmt: error: {NO_BROKER}", file=sys.stderr)
        raise SystemExit(2)
