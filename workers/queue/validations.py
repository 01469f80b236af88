"""The API's validations on the league's workers: the Celery task ``sixnimmt.validate_submission``.

With a broker (``SIXNIMMT_BROKER_URL``) the API stores an accepted upload's archive on its pending
submission (``submissions.archive``, the files as ``bot submit`` packs them) and sends this task
the submission's id on the queue :data:`QUEUE`, which every ``sixnimmt worker`` consumes besides
its blocks' (:mod:`workers.queue.worker`). The worker unpacks the archive again with every limit
of ``bot submit`` (:func:`workers.bots.submit.checked_archive`), runs the sandboxed check game
(:func:`workers.bots.submit.validate`), ends the submission (:func:`workers.store.repo.finish_submission`)
and clears its archive. Without a broker the API runs the same :func:`run` on threads of its own
(:mod:`api.validation`).

Nothing is lost:

- the task is acknowledged late and rejected when its worker dies (a killed pool process, a lost
  node): the broker hands it to another worker, which starts the check again;
- a check that could not run (the platform's failure: no sandbox, a referee that did not start,
  the store unreachable) is retried :data:`RETRIES` times with backoff, then the submission is
  marked invalid saying so (:data:`GAVE_UP`), and the participant submits again;
- a check whose worker died :data:`MAX_DEATHS` times (a bot that gets its worker killed every time,
  which the sandbox should make impossible) is not handed out again: the submission is invalid
  saying so (its starts are counted in the broker's Redis, :func:`_deaths`);
- a delivery of a submission already decided does nothing (redelivered or sent twice);
- a submission whose message was lost (a broker flushed) stays pending with its archive: an API
  that starts sends it again once it has been pending for an hour (:func:`resend_stale`).

What a check does, its metrics and the archive's keeping are :mod:`workers.queue.validating`,
which the API's own threads run too.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sqlalchemy import Engine, select

from referee.settings import load as load_settings
from workers.bots.artifacts import SubmissionError, SubmissionLimits
from workers.bots.submit import checked_archive
from workers.queue.app import app
from workers.queue.validating import (
    CHECK_GAMES,
    GAVE_UP,
    NO_ARCHIVE,
    QUEUE,
    RETRIES,
    VALIDATIONS,
    clear_archive,
    give_up,
    run,
)
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.repo.accounts import PENDING
from workers.store.schema import submissions

log = logging.getLogger(__name__)

__all__ = ["QUEUE", "send", "validate_submission"]

MAX_DEATHS = 3
"""Deliveries of one submission's check whose worker died (killed, out of memory, its node lost)
after which it is marked invalid rather than handed to yet another worker."""
KILLED = (
    "its check stopped the worker that ran it {deaths} times (killed or out of memory) and was not"
    " tried again: check the bot's memory and processes with `sixnimmt bot check`, then submit it again"
)
STARTS_KEY = "sixnimmt:validation:starts:{id}"
"""A counter in the broker's Redis of the check's starts, one a delivery and retry."""

_engine: Engine | None = None


def engine() -> Engine:
    """One engine per worker process (created after the prefork)."""
    global _engine
    if _engine is None:
        _engine = make_engine()
    return _engine


def send(submission_id: int, *, games: int = CHECK_GAMES, broker_url: str | None = None) -> None:
    """Queue the validation of a pending submission whose archive is stored, on ``broker_url`` (default:
    the app's, ``SIXNIMMT_BROKER_URL`` as this process started)."""
    options: dict[str, Any] = {"queue": QUEUE, "retry": True}
    options["retry_policy"] = {"max_retries": 3, "interval_start": 0.5}
    if broker_url is None:
        validate_submission.apply_async((submission_id,), {"games": games}, **options)
        return
    with app.connection_for_write(broker_url) as connection:
        validate_submission.apply_async((submission_id,), {"games": games}, connection=connection, **options)


def _deaths(submission_id: int, retries: int) -> int:
    """How many earlier deliveries of this check died with their worker: its starts so far (counted
    in the broker's Redis, this one included) beyond its retries. 0 without a Redis broker."""
    url = load_settings().broker_url
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return 0
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        key = STARTS_KEY.format(id=submission_id)
        pipe = client.pipeline()  # one round trip
        pipe.incr(key)
        pipe.expire(key, 7 * 86400)
        starts, _ = pipe.execute()
        client.close()
    except redis.RedisError as exc:  # only a guard against a bot that kills every worker
        log.warning("submission %d: its starts are not counted (%s)", submission_id, exc)
        return 0
    return max(0, int(starts) - 1 - retries)


@app.task(name="sixnimmt.validate_submission", bind=True, acks_late=True, reject_on_worker_lost=True)
def validate_submission(self: Any, submission_id: int, games: int = CHECK_GAMES) -> str:
    """Validate a pending submission from its stored archive (see the module); returns its status,
    or ``skipped`` for one decided already."""
    store = engine()
    started = time.perf_counter()
    try:
        with store.connect() as conn:
            row = conn.execute(
                select(
                    submissions.c.status,
                    submissions.c.bot,
                    submissions.c.variant,
                    submissions.c.entry_point,
                    submissions.c.archive,
                ).where(submissions.c.id == submission_id)
            ).first()
        if row is None or row.status != PENDING:
            return "skipped"
        if row.archive is None:
            return str(give_up(store, submission_id, NO_ARCHIVE)["status"])
        deaths = _deaths(submission_id, self.request.retries)
        if deaths >= MAX_DEATHS:
            log.warning("submission %d: its check stopped %d workers; marked invalid", submission_id, deaths)
            return str(give_up(store, submission_id, KILLED.format(deaths=deaths))["status"])
        try:
            new = checked_archive(
                bytes(row.archive),
                row.bot,
                variant=row.variant,
                entry=row.entry_point,
                limits=SubmissionLimits.from_settings(),
            )
        except SubmissionError as exc:  # checked by the API already; the limits may have changed since
            done = repo.finish_submission(store, submission_id, new=None, report=None, reason=str(exc))
            clear_archive(store, submission_id)
            VALIDATIONS.labels("invalid").inc()
            return str(done["status"])
        return str(run(store, submission_id, new, games=games)["status"])
    except Exception as exc:
        tries = self.request.retries + 1
        if tries <= RETRIES:
            log.warning("validation of submission %d could not run (try %d): %s", submission_id, tries, exc)
            raise self.retry(exc=exc, countdown=min(60, 2**tries)) from None
        log.exception("validation of submission %d could not run; marked invalid", submission_id)
        reason = GAVE_UP.format(tries=tries, error=" ".join(str(exc).split())[:300] or type(exc).__name__)
        return str(give_up(store, submission_id, reason, started=started)["status"])
