"""What a validation of an uploaded bot does, wherever it runs: the check, the submission's end, the
metrics, the archive kept for it and the queue's length; no Celery here (the API imports it).

The Celery task that runs it on the league's workers is :mod:`workers.queue.validations`; the API's
own threads run :func:`run` without a broker (:mod:`api.validation`). Metrics (in the worker's
``/metrics``, and in the API's for its own threads): validations by outcome (valid; invalid: the bot
failed its check; failed: the check could not run) and their duration.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from prometheus_client import Counter, Histogram
from sqlalchemy import Engine, and_, select, update

from workers.bots.submit import validate
from workers.store import repo
from workers.store.repo.accounts import INVALID, PENDING, VALID
from workers.store.schema import submissions

log = logging.getLogger(__name__)

QUEUE = "sixnimmt-validations"
"""The queue of the validations: apart from the blocks', so a check is not queued behind a league."""
RETRIES = 3
"""Tries after the first of a check that could not run, before the submission is marked invalid."""
CHECK_GAMES = 8
"""The check games a worker plays when the message does not say (as ``bot submit``)."""
GAVE_UP = (
    "the check could not run ({tries} tries; the platform's failure, not the bot's): {error}; submit it again"
)
NO_ARCHIVE = "its archive is gone (its validation was interrupted): submit it again"
OUTCOMES = ("valid", "invalid", "failed")

VALIDATIONS = Counter(
    "sixnimmt_validations_total",
    "Validations of uploaded bots ended, by outcome (valid; invalid: the bot failed its check;"
    " failed: the check could not run).",
    ["outcome"],
)
VALIDATION_SECONDS = Histogram(
    "sixnimmt_validation_duration_seconds",
    "Time from a validation's start to its end (the check games and storing the version), by outcome.",
    ["outcome"],
    buckets=(1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600),
)
for _outcome in OUTCOMES:  # every series exists from the start, at 0
    VALIDATIONS.labels(_outcome)


def run(
    store: Engine, submission_id: int, new: repo.NewVersion, *, games: int = CHECK_GAMES, sandbox: bool = True
) -> dict[str, Any]:
    """Run the check game of a pending submission's version and end the submission: valid (the
    version stored, owned by its account) or invalid with the check's reason and report; its archive
    is cleared. Raises what the check or the store raised when it could not run (the caller retries
    or gives up with :func:`give_up`)."""
    started = time.perf_counter()
    report, reason = validate(new, games=games, sandbox=sandbox)
    transcripts = report.details.get("transcripts")
    done = repo.finish_submission(
        store,
        submission_id,
        new=new if reason is None else None,
        report=report.to_json(),
        reason=reason,
        transcript=transcripts[0] if transcripts else None,
    )
    clear_archive(store, submission_id)
    result = "valid" if done["status"] == VALID else "invalid"
    VALIDATIONS.labels(result).inc()
    VALIDATION_SECONDS.labels(result).observe(time.perf_counter() - started)
    log.info("submission %d of %s: %s", submission_id, new.bot, done["status"])
    return done


def give_up(
    store: Engine, submission_id: int, reason: str, *, started: float | None = None
) -> dict[str, Any]:
    """End a pending submission invalid with ``reason`` (its check could not run), its archive cleared."""
    done = repo.finish_submission(store, submission_id, new=None, report=None, reason=reason)
    clear_archive(store, submission_id)
    VALIDATIONS.labels("failed").inc()
    if started is not None:
        VALIDATION_SECONDS.labels("failed").observe(time.perf_counter() - started)
    return done


def store_archive(store: Engine, submission_id: int, archive: bytes) -> None:
    """Keep a pending submission's archive for the worker that validates it."""
    with store.begin() as conn:
        conn.execute(update(submissions).where(submissions.c.id == submission_id).values(archive=archive))


def clear_archive(store: Engine, submission_id: int) -> None:
    with store.begin() as conn:
        conn.execute(update(submissions).where(submissions.c.id == submission_id).values(archive=None))


def pending(store: Engine) -> int:
    """Submissions waiting for their validation (the API's gauge of the validation queue)."""
    with store.connect() as conn:
        count = conn.execute(
            select(sa.func.count()).select_from(submissions).where(submissions.c.status == PENDING)
        ).scalar_one()
    return int(count)


def resend_stale(
    store: Engine, *, older_than: dt.timedelta, send: Callable[[int], None], abandon_reason: str
) -> tuple[int, int]:
    """At an API's start with a broker: send again the validations of submissions pending for over
    ``older_than`` that still hold their archive (their message may be lost; a second delivery of
    one still queued does nothing), and mark those without one invalid with ``abandon_reason``
    (the threads of a stopped API ran them). Returns (sent again, abandoned)."""
    before = dt.datetime.now(dt.UTC) - older_than
    stale = and_(submissions.c.status == PENDING, submissions.c.created_at < before)
    with store.begin() as conn:
        kept = select(submissions.c.id).where(stale, submissions.c.archive.is_not(None))
        ids = [int(i) for i in conn.execute(kept).scalars()]
        abandoned = conn.execute(
            update(submissions)
            .where(stale, submissions.c.archive.is_(None))
            .values(status=INVALID, reason=abandon_reason, finished_at=dt.datetime.now(dt.UTC))
        ).rowcount
    for submission_id in ids:
        send(submission_id)
    return len(ids), int(abandoned or 0)
