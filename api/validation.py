"""The API's validations: each accepted upload's check game, in the sandbox, on a bounded pool of
background threads in the API's own process (``SIXNIMMT_API_VALIDATION_WORKERS``).

A submission is stored ``pending`` before it is queued here; its validation ends it ``valid`` (the
version is stored, owned by the account) or ``invalid`` with the check's reason and report. An API
process that stops loses the validations it had not finished: an API's start marks those pending
for over an hour invalid, saying so (:func:`workers.store.repo.abandon_pending`; younger ones may
be another API process's, still running), and the participant submits again.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine

from workers.bots.submit import validate
from workers.store import repo

log = logging.getLogger("sixnimmt.api")

ABANDONED = "its validation was interrupted (the API stopped): submit it again"


class Validator:
    """Runs queued validations, ``workers`` at a time."""

    def __init__(self, engine: Engine, *, workers: int = 1, games: int = 8, sandbox: bool = True) -> None:
        self.engine, self.games, self.sandbox = engine, games, sandbox
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sixnimmt-validate")
        self.pending: set[int] = set()

    def submit(self, submission_id: int, new: repo.NewVersion) -> Future[dict[str, Any]]:
        self.pending.add(submission_id)
        return self._pool.submit(self._run, submission_id, new)

    def _run(self, submission_id: int, new: repo.NewVersion) -> dict[str, Any]:
        try:
            try:
                report, reason = validate(new, games=self.games, sandbox=self.sandbox)
            except Exception as exc:  # the platform's failure (no sandbox, a referee that did not start)
                log.exception("validation of submission %d failed", submission_id)
                return repo.finish_submission(
                    self.engine,
                    submission_id,
                    new=None,
                    report=None,
                    reason=f"the check could not run: {exc}",
                )
            body = report.to_json()
            transcripts = report.details.get("transcripts")
            done = repo.finish_submission(
                self.engine,
                submission_id,
                new=new if reason is None else None,
                report=body,
                reason=reason,
                transcript=transcripts[0] if transcripts else None,
            )
            log.info("submission %d of %s: %s", submission_id, new.bot, done["status"])
            return done
        finally:
            self.pending.discard(submission_id)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
