"""The workers' Prometheus metrics, all defined here; the task wrapper; the worker's ``/metrics``.

What is measured: blocks by variant and outcome and their duration, every Celery task's runs,
retries and duration (:class:`ObservedTask`, the base class of every task of the app), bot
processes alive, store write latency, and the depth of the broker's queue (read through kombu at
each scrape by :class:`QueueDepth`). A worker also plays the matches: the referee runs inside
each pool process, so the referee's metrics (:mod:`referee.server.metrics`) go out here too.
Labels have small, fixed sets of values (variant, outcome, task name, retry reason, store
operation, queue); never a block, match, bot or user id.

Why multiprocess mode, not one exporter per process: Celery's prefork pool runs tasks in child
processes that the main process forks, replaces (after a crash, a kill, ``max_tasks_per_child``)
and counts by ``--concurrency``. One exporter per child would need a port per child that
Prometheus must discover, and every replaced child would reset its counters. In prometheus-client's
multiprocess mode every process writes its samples to memory-mapped files in
``PROMETHEUS_MULTIPROC_DIR`` and the main process serves them all on one port
(``SIXNIMMT_WORKER_METRICS_PORT``), adding them up: counters and histograms of children that are
gone still count, and the gauges here sum over the live processes only (``livesum``; a dead
child's gauge files are dropped at the next scrape). The directory must be set before
prometheus-client is first imported, which is why ``sixnimmt worker`` sets it before it imports
the app, and why :func:`start_exporter` refuses to serve if that did not happen.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from celery import Task
from celery.exceptions import Retry
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from arena.matches import Launcher
from referee.rules.registry import VARIANTS
from referee.server import metrics as referee_metrics
from workers import procs

log = logging.getLogger(__name__)

BLOCK_BUCKETS = (1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)
TASK_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)
STORE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

BLOCK_OUTCOMES = ("stored", "raced", "skipped", "failed", "lost")
"""stored; raced: another delivery stored it first; skipped: done already, or another worker's lease
is live; failed: retried; lost: its lease was lost while it played (stopped, nothing stored)."""

BLOCKS = Counter(
    "sixnimmt_worker_blocks_total",
    "Blocks a worker took, by variant and outcome (stored, raced, skipped: done already, failed).",
    ["variant", "outcome"],
)
BLOCK_SECONDS = Histogram(
    "sixnimmt_worker_block_duration_seconds",
    "Wall time of a block played (stored, raced or failed): claim, bots, matches and the store.",
    ["variant"],
    buckets=BLOCK_BUCKETS,
)
TASKS = Counter(
    "sixnimmt_worker_tasks_total",
    "Celery task runs by task and outcome (succeeded, retried, failed).",
    ["task", "outcome"],
)
TASK_RETRIES = Counter(
    "sixnimmt_worker_task_retries_total",
    "Task runs that ended in a retry, by task and reason (the error class the task retries for).",
    ["task", "reason"],
)
TASK_SECONDS = Histogram(
    "sixnimmt_worker_task_duration_seconds",
    "Wall time of one run of a task, whatever its outcome.",
    ["task"],
    buckets=TASK_BUCKETS,
)
TASKS_RUNNING = Gauge(
    "sixnimmt_worker_tasks_running",
    "Task runs in progress: busy pool processes (summed over the live processes).",
    ["task"],
    multiprocess_mode="livesum",
)
BOT_PROCESSES = Gauge(
    "sixnimmt_worker_bot_processes",
    "Bot processes started for the blocks in play and not yet reaped (summed over the live processes).",
    multiprocess_mode="livesum",
)
STORE_WRITE_SECONDS = Histogram(
    "sixnimmt_worker_store_write_duration_seconds",
    "Time of one write transaction to the store, by operation (claim_block, record_block).",
    ["operation"],
    buckets=STORE_BUCKETS,
)
REQUEUED = Counter(
    "sixnimmt_worker_blocks_requeued_total",
    "Messages the reconciliation sent for blocks of started leagues, by reason (unqueued: waiting with"
    " no message in the broker; lease_expired: its worker stopped renewing; next_round: a new round).",
    ["reason"],
)
LEASES_LOST = Counter(
    "sixnimmt_worker_leases_lost_total",
    "Blocks a worker stopped playing because it could not keep their lease.",
)
RECONCILE_RUNS = Counter(
    "sixnimmt_worker_reconcile_runs_total",
    "Reconciliation passes by outcome (ok, failed: the store or the broker could not be reached).",
    ["outcome"],
)
LEAGUES_OPEN = Gauge(
    "sixnimmt_worker_leagues_open",
    "Leagues handed to the workers and not finished, at the last reconciliation pass.",
    multiprocess_mode="max",
)
LEAGUE_STALLED_SECONDS = Gauge(
    "sixnimmt_worker_league_stalled_seconds",
    "Longest time since an open league last stored a block (or was started), at the last pass.",
    multiprocess_mode="max",
)
MESSAGES_REFUSED = Counter(
    "sixnimmt_worker_messages_refused_total",
    "play_block messages a worker refused and dropped, by reason (workers.queue.messages.Refusal:"
    " other_store, not_started, other_league, unknown_block, old_format, malformed).",
    ["reason"],
)
REQUEUE_REASONS = ("unqueued", "lease_expired", "next_round")
for _reason in REQUEUE_REASONS:
    REQUEUED.labels(_reason)
for _outcome in ("ok", "failed"):
    RECONCILE_RUNS.labels(_outcome)

QUEUE_MESSAGES = "sixnimmt_worker_queue_messages"
"""Collected on scrape by :class:`QueueDepth`, so the name is declared here, not a metric object."""
BROKER_UP = "sixnimmt_worker_broker_up"

for _variant in VARIANTS:  # every series exists from the start, so increase() sees the first block
    for _outcome in ("stored", "raced", "failed"):
        BLOCKS.labels(_variant.name, _outcome)


def block_ended(variant: str, outcome: str, started: float | None = None) -> None:
    """Count a block's ``outcome``; with ``started`` (``time.monotonic()``), observe its duration."""
    BLOCKS.labels(variant, outcome).inc()
    if started is not None:
        BLOCK_SECONDS.labels(variant).observe(time.monotonic() - started)


@contextlib.contextmanager
def counting_bots(launch: Launcher | None) -> Iterator[Launcher | None]:
    """``launch`` wrapped to count the bot processes it starts, until the ``with`` block ends.

    ``play_matches`` reaps every bot it started before it returns, so leaving is when they are
    gone. Without a launcher (``sandbox=False``, for tests) nothing is counted.
    """
    if launch is None:
        yield None
        return
    started = 0

    def counted(argv: list[str], env: dict[str, str], **options: Any) -> Any:
        nonlocal started
        process = launch(argv, env, **options)
        started += 1
        BOT_PROCESSES.inc()
        return process

    try:
        yield counted
    finally:
        BOT_PROCESSES.dec(started)


class ObservedTask(Task):  # type: ignore[misc]
    """The base of every task of the app: each run is counted by outcome, timed and logged."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = self.name
        attempt = (self.request.retries or 0) + 1
        started = time.perf_counter()
        outcome = "failed"
        TASKS_RUNNING.labels(name).inc()
        try:
            result = super().__call__(*args, **kwargs)
            outcome = "succeeded"
            return result
        except Retry as retry:
            outcome = "retried"
            TASK_RETRIES.labels(name, self.retry_reason(retry.exc)).inc()
            log.warning("%s%r attempt %d will be retried: %s", name, args, attempt, retry.exc)
            raise
        except Exception as exc:
            log.error("%s%r attempt %d failed: %s: %s", name, args, attempt, type(exc).__name__, exc)
            raise
        finally:
            elapsed = time.perf_counter() - started
            TASKS_RUNNING.labels(name).dec()
            TASKS.labels(name, outcome).inc()
            TASK_SECONDS.labels(name).observe(elapsed)
            log.info("%s%r attempt %d %s in %.2f s", name, args, attempt, outcome, elapsed)

    def retry_reason(self, exc: BaseException | None) -> str:
        """The error class among the task's ``autoretry_for`` that ``exc`` is (a bounded set)."""
        for kind in getattr(self, "autoretry_for", ()) or ():
            if isinstance(exc, kind):
                return str(kind.__name__)
        return "other"


def waiting_messages(broker_url: str, queues: Iterable[str], *, timeout_s: float) -> dict[str, int]:
    """How many messages wait in each queue, as the broker reports them through kombu's public
    API: a passive declaration counts every message of the queue, whatever the broker keeps them
    in; a queue that does not exist holds none. Raises if the broker cannot be asked."""
    # kombu: only where a worker serves metrics or reconciles (this module is imported by every command).
    from kombu import Connection
    from kombu.exceptions import ChannelError

    counts: dict[str, int] = {}
    options = {"socket_timeout": timeout_s}
    with Connection(broker_url, connect_timeout=timeout_s, transport_options=options) as conn:
        for queue in queues:
            channel = conn.channel()
            try:
                counts[queue] = channel.queue_declare(queue=queue, passive=True).message_count
            except ChannelError:
                counts[queue] = 0
            finally:
                channel.close()
    return counts


class QueueDepth:
    """A collector: messages waiting in the broker's queues, read through kombu at each scrape.

    Every worker reports the same queues, so dashboards take the ``max`` over instances.
    """

    def __init__(self, broker_url: str, queues: Sequence[str]) -> None:
        self.broker_url = broker_url
        self.queues = list(queues)

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return [self._depth(), self._up()]

    def collect(self) -> Iterable[GaugeMetricFamily]:
        depth, up = self._depth(), self._up()
        try:
            waiting = waiting_messages(self.broker_url, self.queues, timeout_s=2)
        except Exception as exc:
            log.warning("cannot read the queue depth from the broker: %s", exc)
            up.add_metric([], 0)
            return [up]
        for queue, count in waiting.items():
            depth.add_metric([queue], count)
        up.add_metric([], 1)
        return [depth, up]

    @staticmethod
    def _depth() -> GaugeMetricFamily:
        return GaugeMetricFamily(
            QUEUE_MESSAGES, "Messages waiting in the broker queue (blocks not yet taken).", labels=["queue"]
        )

    @staticmethod
    def _up() -> GaugeMetricFamily:
        return GaugeMetricFamily(BROKER_UP, "1 if the worker could read the broker's queues at this scrape.")


class LiveProcessCollector(MultiProcessCollector):  # type: ignore[misc]
    """The samples of every process of this worker; gauges of processes that died are dropped first."""

    _LIVE_GAUGE = re.compile(r"gauge_live\w*?_(\d+)\.db")

    def collect(self) -> Iterable[Any]:
        for path in Path(self._path).glob("gauge_live*.db"):
            match = self._LIVE_GAUGE.fullmatch(path.name)
            if match and not procs.alive(int(match.group(1))):
                mark_process_dead(int(match.group(1)), self._path)
        return super().collect()  # type: ignore[no-any-return]


def registry(broker_url: str, queues: Sequence[str]) -> CollectorRegistry:
    """What a worker serves: every process's samples, and the queue depth if the broker is Redis."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    if not directory or values.ValueClass is values.MutexValue:
        raise RuntimeError(
            "worker metrics need PROMETHEUS_MULTIPROC_DIR set before prometheus_client is imported"
        )
    out = CollectorRegistry()
    LiveProcessCollector(out, path=directory)
    if broker_url.startswith(("redis://", "rediss://", "redis+socket://")):
        out.register(QueueDepth(broker_url, queues))
    return out


def start_exporter(port: int, broker_url: str, queues: Sequence[str]) -> Callable[[], None] | None:
    """Serve the worker's ``/metrics`` on ``port`` from the main process (see the module docstring).

    A port it cannot listen on (taken: another worker on this host has it) stops the worker before
    it starts, with one line on stderr and exit status 2: a worker nobody can scrape is not run
    unnoticed. ``port`` 0 serves nothing.
    """
    if port:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("0.0.0.0", port))
        except (OSError, OverflowError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            print(
                f"sixnimmt: error: cannot serve the worker's metrics on port {port}: {reason}"
                " (another worker on this host?): give each worker its own --metrics-port"
                " (or SIXNIMMT_WORKER_METRICS_PORT), or --metrics-port 0 for none",
                file=sys.stderr,
            )
            raise SystemExit(2) from None
    return referee_metrics.start_exporter(port, registry(broker_url, queues))
