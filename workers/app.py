"""The Celery app ``workers.app``: Redis broker from ``SIXNIMMT_BROKER_URL``, results in the store.

Tasks take ids, are idempotent and acknowledged late, so a worker that dies mid-block has its
block delivered again; ``SIXNIMMT_VISIBILITY_TIMEOUT_S`` bounds how long Redis waits before it
hands an unacknowledged block to another worker.
"""

from __future__ import annotations

from celery import Celery

from referee.settings import load as load_settings


def make_app() -> Celery:
    """Build the app from the settings."""
    settings = load_settings()
    broker = settings.broker_url or "redis://127.0.0.1:6379/0"
    # Every task's runs, retries and durations are counted and logged by one base class.
    app = Celery(
        "sixnimmt", broker=broker, include=["workers.tasks"], task_cls="workers.metrics:ObservedTask"
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
        },
        task_default_queue="sixnimmt-blocks",
    )
    return app


app = make_app()
