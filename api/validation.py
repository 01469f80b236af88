"""The API's validations: each accepted upload's check game, in the sandbox.

Two ways, chosen by the settings (:func:`make_validator`):

- with a broker (``SIXNIMMT_BROKER_URL``, as the league's workers use), :class:`QueuedValidator`
  stores the checked archive on the pending submission and queues the Celery task
  ``sixnimmt.validate_submission``, which a ``sixnimmt worker`` runs
  (:mod:`workers.queue.validations`: retried when the check could not run, redelivered when its
  worker dies, the submission marked invalid saying why once the tries are spent);
- without one, :class:`Validator` runs them on a bounded pool of background threads in the API's own
  process (``SIXNIMMT_API_VALIDATION_WORKERS``).

A submission is stored ``pending`` before it is queued; its validation ends it ``valid`` (the
version is stored, owned by the account) or ``invalid`` with the check's reason and report.
At an API's start (:meth:`Validator.recover`), submissions pending for over an hour lost their
validation: the local pool's (an API process that stopped) are marked invalid, saying so, and the
participant submits again; with a broker, those that still hold their archive are queued again.
"""

from __future__ import annotations

import datetime as dt
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine

from referee.settings import Settings
from workers.store import repo

log = logging.getLogger("sixnimmt.api")

ABANDONED = "its validation was interrupted (the API stopped): submit it again"


class Validator:
    """Runs queued validations on ``workers`` threads of this process."""

    def __init__(self, engine: Engine, *, workers: int = 1, games: int = 8, sandbox: bool = True) -> None:
        self.engine, self.games, self.sandbox = engine, games, sandbox
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sixnimmt-validate")
        self.pending: set[int] = set()

    def recover(self, older_than: dt.timedelta) -> None:
        """Mark the submissions pending for longer than ``older_than`` invalid (their validation ran
        in an API process that stopped; younger ones may be another API process's, still running)."""
        abandoned = repo.abandon_pending(self.engine, ABANDONED, older_than=older_than)
        if abandoned:
            log.warning("%d validations of a stopped API marked invalid: %s", abandoned, ABANDONED)

    def submit(self, submission_id: int, new: repo.NewVersion) -> Future[dict[str, Any]] | None:
        self.pending.add(submission_id)
        return self._pool.submit(self._run, submission_id, new)

    def _run(self, submission_id: int, new: repo.NewVersion) -> dict[str, Any]:
        from workers.queue import validating

        try:
            try:
                return validating.run(self.engine, submission_id, new, games=self.games, sandbox=self.sandbox)
            except Exception as exc:  # the platform's failure (no sandbox, a referee that did not start)
                log.exception("validation of submission %d failed", submission_id)
                return validating.give_up(self.engine, submission_id, f"the check could not run: {exc}")
        finally:
            self.pending.discard(submission_id)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class QueuedValidator(Validator):
    """Queues each validation for the league's Celery workers (:mod:`workers.queue.validations`)."""

    def __init__(self, engine: Engine, broker_url: str, *, games: int = 8) -> None:
        super().__init__(engine, workers=1, games=games)
        self.broker_url = broker_url

    def recover(self, older_than: dt.timedelta) -> None:
        """Queue again the validations pending for longer than ``older_than`` that still hold their
        archive (their message may be lost; one still queued runs once); mark the others invalid."""
        from workers.queue import validating

        sent, abandoned = validating.resend_stale(
            self.engine, older_than=older_than, send=self._send, abandon_reason=ABANDONED
        )
        if sent or abandoned:
            log.warning("pending validations: %d queued again, %d marked invalid", sent, abandoned)

    def _send(self, submission_id: int) -> None:
        # The one import of Celery in the API (pyproject's contract ignores it): with a broker only.
        from workers.queue import validations

        validations.send(submission_id, games=self.games, broker_url=self.broker_url)

    def submit(self, submission_id: int, new: repo.NewVersion) -> None:
        """Store the archive on the pending submission and queue its validation. If the broker cannot
        take it, the submission stays pending with its archive and an API's start queues it again."""
        from workers.queue import validating

        validating.store_archive(self.engine, submission_id, new.content)
        try:
            self._send(submission_id)
        except Exception:
            log.exception("submission %d not queued (an API's start queues it again)", submission_id)
        return None


def make_validator(engine: Engine, settings: Settings, *, games: int = 8, sandbox: bool = True) -> Validator:
    """The Celery workers' validations with a broker, else this process's threads."""
    if settings.broker_url:
        return QueuedValidator(engine, settings.broker_url, games=games)
    return Validator(engine, workers=settings.api_validation_workers, games=games, sandbox=sandbox)
