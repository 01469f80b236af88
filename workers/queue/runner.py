"""Hand a league to the workers and follow it: ``league start`` and ``league run`` on Celery.

The league is the store's: these functions queue its waiting blocks (:mod:`workers.queue.reconcile`
says which) and read its progress from the store; the workers play the blocks and add the rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kombu.exceptions import OperationalError as BrokerError
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from referee.settings import load as load_settings
from workers.queue import reconcile, routing
from workers.queue.messages import BlockMessage
from workers.queue.tasks import send_block
from workers.store import repo
from workers.store.engine import StoreError


def start(
    engine: Engine, league: repo.League, *, send: Callable[[BlockMessage], object] | None = None
) -> int:
    """Hand a league to the workers (``league start``); returns how many blocks were queued.

    Queues the blocks never queued; every pending block when the broker holds no message (they
    were lost); otherwise only those sent longer than the reconciliation's backlog grace ago
    (:func:`workers.queue.reconcile.grace_for`). So starting twice queues
    nothing twice; from then on the workers' reconciliation finishes the league
    (:mod:`workers.queue.reconcile`).
    """
    repo.start_league(engine, league.id)
    settings = load_settings()
    # No message waiting: any were lost, send every pending block now. A broker that cannot be
    # asked counts as holding them all (an unreachable one is reported once, by the send that fails).
    lost = routing.waiting_messages(settings.broker_url) == 0
    report = reconcile.reconcile_league(
        engine,
        league.id,
        send or send_block,
        grace_s=0.0 if lost else reconcile.BACKLOG_PASSES * settings.reconcile_s,
        failed_grace_s=reconcile.BACKLOG_PASSES * settings.reconcile_s,
    )
    return sum(len(ids) for ids in report.queued.values())


RETRY_ERRORS: tuple[type[BaseException], ...] = (OperationalError, StoreError, OSError)
"""What following a league retries: the store or the broker cannot be reached for now."""


def _retry_errors() -> tuple[type[BaseException], ...]:
    return (*RETRY_ERRORS, BrokerError)


def run_celery(
    engine: Engine,
    league: repo.League,
    *,
    progress: Callable[[int], None] | None = None,
    planned: Callable[[int], None] | None = None,
    poll_s: float = 0.5,
    timeout_s: float | None = None,
    notify: Callable[[str], None] | None = None,
    no_worker_s: float = 30.0,
    send: Callable[[BlockMessage], object] | None = None,
    interrupted: Callable[[], bool] = lambda: False,
) -> dict[str, int]:
    """Start the league on the workers (:func:`start`) and follow the store until it is finished.

    ``interrupted`` is asked at every poll: when it says so, following stops with
    ``KeyboardInterrupt`` (see :func:`workers.cli.running.keep_interrupts`).

    Following only reads: interrupting it leaves the league to the workers. Store and broker
    errors are retried with backoff (up to 30 s apart), each retry told to ``notify``, which also
    hears when no worker has been seen for ``no_worker_s`` and, once each, what a block waits for
    (a remote bot to connect, a lease nobody renews to expire: :func:`workers.store.repo.waits`).
    A league with a stopping rule goes on round after round: the workers add the rounds, and so
    does this loop when it sees one stored.
    """
    say = notify or (lambda message: None)
    send = send or send_block
    started = time.monotonic()
    errors = _retry_errors()
    delay = 0.0

    def attempt(what: str, call: Callable[[], Any]) -> Any:
        nonlocal delay
        while True:
            if interrupted():
                raise KeyboardInterrupt
            try:
                value = call()
                delay = 0.0
                return value
            except errors as exc:
                delay = min(30.0, max(1.0, delay * 2))
                reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:200]
                say(f"{what} failed ({type(exc).__name__}: {reason}); retrying in {delay:.0f} s")
                _check_timeout(started, timeout_s, "the league is not finished")
                time.sleep(delay)

    queued = attempt("starting the league", lambda: start(engine, league, send=send))
    settings = load_settings()
    said: set[tuple[int, int, str]] = set()
    total = None
    seen = 0
    done_before: int | None = None
    last_change = time.monotonic()
    warned = 0.0
    while True:
        if interrupted():
            raise KeyboardInterrupt
        counts = attempt("reading the store", lambda: repo.block_counts(engine, league.id))
        done = counts.get("done", 0)
        if done_before is None:
            done_before = done
        blocks = sum(counts.values())
        if total is not None and blocks > total and planned:
            planned(blocks - total)
        total = blocks
        if done - done_before > seen:
            if progress:
                progress(done - done_before - seen)
            seen = done - done_before
            last_change = time.monotonic()
        if done == blocks:
            report = attempt("adding the next round", lambda: reconcile.advance(engine, league.id, send))
            if report.finished:
                return {"stored": seen, "queued": queued}
            if not report.queued:  # another runner is adding it
                time.sleep(poll_s)
            continue
        waits = attempt(
            "reading the store",
            lambda: repo.waits(
                engine, league.id, said, lease_s=settings.lease_s, renew_s=settings.lease_renew_s
            ),
        )
        for line in waits:
            say(line)
        now = time.monotonic()
        if now - last_change >= no_worker_s and now - warned >= no_worker_s:
            seen_at = attempt("reading the store", lambda: repo.last_worker_seen(engine))
            ago = reconcile.elapsed_since(seen_at)
            if ago is None or ago >= no_worker_s:
                say(
                    "no worker has been seen for "
                    + ("ever" if ago is None else f"{ago:.0f} s")
                    + ": start one with 'sixnimmt worker' (the league waits in the queue)"
                )
                warned = now
        _check_timeout(started, timeout_s, f"{blocks - done} of {blocks} blocks not stored")
        time.sleep(poll_s)


def _check_timeout(started: float, timeout_s: float | None, what: str) -> None:
    if timeout_s is not None and time.monotonic() - started > timeout_s:
        raise TimeoutError(f"{what} after {timeout_s:.0f} s")
