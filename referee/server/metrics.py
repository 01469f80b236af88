"""The referee's Prometheus metrics, all defined here, and the ``/metrics`` endpoint that serves them.

Labels have small, fixed sets of values: the variant (a registry name), the termination of a
match and the kind of a fault; never a match, bot, entrant or token. Who feeds what:

* the driver reports decisions and faults through :class:`MetricsObserver` (a
  :class:`~referee.driver.MatchObserver`), so the driver itself imports no metrics library;
* the state counts matches as they start and end (:func:`match_started`, :func:`match_ended`);
* the servicer counts bot streams (:data:`BOT_CONNECTIONS`) and those it refused before their
  Hello (:data:`STREAMS_REFUSED`).

``sixnimmt referee serve`` serves them on ``SIXNIMMT_REFEREE_METRICS_PORT``. In a league the
referee runs inside each Celery pool process (``arena.referee_thread``), and these metrics go
out through the worker's endpoint with the worker's own (see :mod:`workers.metrics`); that is
why the gauges say how they add up over processes.

prometheus-client comes with the ``server`` extra. A bot author's base install still runs
``referee serve`` for ``bot play``: without the library every metric here is a no-op.
"""

from __future__ import annotations

import logging
import math
import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from referee.driver import FaultKind, MatchObserver, MatchReport
from referee.rules.registry import VARIANTS

log = logging.getLogger(__name__)


class _Unmeasured:
    """Stands in for every metric when prometheus-client is not installed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def labels(self, *args: Any, **kwargs: Any) -> _Unmeasured:
        return self

    def inc(self, amount: float = 1) -> None:
        pass

    dec = observe = set = inc


try:
    from prometheus_client import REGISTRY, Counter, Gauge, Histogram, start_http_server
except ImportError:  # the base install: the referee plays, it just counts nothing
    REGISTRY = None
    Counter = Gauge = Histogram = _Unmeasured  # type: ignore[assignment,misc]
    start_http_server = None  # type: ignore[assignment]

DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)
"""Seconds: a fast bot answers in milliseconds; the default decision time is 2 s plus a 10 s bank."""
MATCH_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)

MATCHES = Counter(
    "sixnimmt_referee_matches_total",
    "Matches that ended, by variant and termination (aborted: a referee error ended the match).",
    ["variant", "termination"],
)
MATCH_SECONDS = Histogram(
    "sixnimmt_referee_match_duration_seconds",
    "Wall time of a match, from its creation (bots connecting) to its last step.",
    ["variant"],
    buckets=MATCH_BUCKETS,
)
MATCHES_RUNNING = Gauge(
    "sixnimmt_referee_matches_running",
    "Matches created and not ended yet (summed over the live processes).",
    ["variant"],
    multiprocess_mode="livesum",
)
DECISION_SECONDS = Histogram(
    "sixnimmt_referee_decision_latency_seconds",
    "Time from a decision request to the bot's reply (timeouts and crashes are faults, not replies).",
    ["variant"],
    buckets=DECISION_BUCKETS,
)
FAULTS = Counter(
    "sixnimmt_referee_faults_total",
    "Faults charged to seats, by variant and kind; each one got the default action.",
    ["variant", "kind"],
)
FORFEITS = Counter(
    "sixnimmt_referee_forfeits_total",
    "Seats that forfeited a match: over the fault limit, they were defaulted unasked.",
    ["variant"],
)
BOT_CONNECTIONS = Gauge(
    "sixnimmt_referee_bot_connections",
    "Bot streams attached to an entrant link now (summed over the live processes).",
    multiprocess_mode="livesum",
)

STREAMS_REFUSED = Counter(
    "sixnimmt_referee_streams_refused_total",
    "Bot streams ended before their Hello was read, by why: unknown_token (the metadata's),"
    " token_limit (over its own token's limits: charged to its seats), peer_rate (a TCP address"
    " over its rate), room (closed to make room in a full pool), no_hello (none in time).",
    ["reason"],
)
REFUSALS = ("unknown_token", "token_limit", "peer_rate", "room", "no_hello")
"""The reasons of :data:`STREAMS_REFUSED`: a flood shows as a rate of one of them."""

for _variant in VARIANTS:  # every series exists from the start, so rate() sees the first fault
    for _kind in FaultKind:
        FAULTS.labels(_variant.name, _kind.value)
for _reason in REFUSALS:
    STREAMS_REFUSED.labels(_reason)


DECISIONS_PER_FLUSH = 256
"""Decision times a variant gathers before they are counted into the histogram (and at every
match's end): ``observe`` once per decision, two locks each, was 5% of the referee's CPU."""


def observe_many(child: Any, values: Sequence[float]) -> None:
    """Count ``values`` into a histogram child as ``observe`` would one by one: bucket counts
    found by bisection, then one increment per bucket and one for the sum.

    It uses the child's bucket values (``_buckets``, ``_upper_bounds``, ``_sum``, the layout of
    prometheus-client 0.8 to 0.26); a child without them is fed one ``observe`` per value.
    """
    buckets = getattr(child, "_buckets", None)
    bounds = getattr(child, "_upper_bounds", None)
    total = getattr(child, "_sum", None)
    if buckets is None or bounds is None or total is None or len(buckets) != len(bounds):
        for value in values:
            child.observe(value)
        return
    counts = [0] * len(bounds)
    for value in values:
        counts[bisect_left(bounds, value)] += 1  # the first bound >= value, as observe's <=
    for bucket, count in zip(buckets, counts, strict=True):
        if count:
            bucket.inc(count)
    total.inc(math.fsum(values))


class MetricsObserver:
    """Feeds the driver's reports into the decision and fault metrics.

    Decision times are counted in batches of :data:`DECISIONS_PER_FLUSH` and at the end of every
    match (:func:`match_ended`), so ``/metrics`` lags the decisions of running matches by at
    most that many per variant and shows all of them once the matches are over.
    """

    def __init__(self) -> None:
        self._pending: dict[str, list[float]] = {}
        """variant → decision times not counted yet."""

    def decided(self, variant: str, seconds: float) -> None:
        pending = self._pending.get(variant)
        if pending is None:
            pending = self._pending[variant] = []
        pending.append(seconds)
        if len(pending) >= DECISIONS_PER_FLUSH:
            self.flush(variant)

    def flush(self, variant: str) -> None:
        """Count a variant's gathered decision times into the histogram."""
        values = self._pending.get(variant)
        if values:
            self._pending[variant] = []
            observe_many(DECISION_SECONDS.labels(variant), values)

    def faulted(self, variant: str, kind: FaultKind) -> None:
        FAULTS.labels(variant, kind.value).inc()


OBSERVER: MatchObserver = MetricsObserver()


def match_started(variant: str) -> float:
    """A match of ``variant`` starts; returns the start time to pass to :func:`match_ended`."""
    MATCHES_RUNNING.labels(variant).inc()
    return time.monotonic()


def match_ended(variant: str, started: float, report: MatchReport | None, *, aborted: bool) -> None:
    """A match ended with ``report``, or ``aborted`` by a referee error, or neither: cancelled at shutdown."""
    MATCHES_RUNNING.labels(variant).dec()
    OBSERVER.flush(variant)
    if report is None and not aborted:
        return
    termination = report.outcome.termination.value if report is not None else "aborted"
    MATCHES.labels(variant, termination).inc()
    MATCH_SECONDS.labels(variant).observe(time.monotonic() - started)
    forfeits = sum(seat.forfeited for seat in report.seats) if report is not None else 0
    if forfeits:
        FORFEITS.labels(variant).inc(forfeits)


def start_exporter(port: int, registry: Any = None, address: str = "0.0.0.0") -> Callable[[], None] | None:
    """Serve ``/metrics`` of ``registry`` (default: this process's) on ``port`` from a daemon thread.

    Returns the function that stops it, or ``None`` when nothing is served: ``port`` 0, no
    prometheus-client, or the port is taken (a warning; the service runs on without metrics).
    """
    if not port:
        return None
    if start_http_server is None:
        log.warning("metrics are off: prometheus-client is not installed ('sixnimmt-arena[server]' has it)")
        return None
    try:
        server, thread = start_http_server(port, address, registry if registry is not None else REGISTRY)
    except (OSError, OverflowError) as exc:  # taken, not allowed, or not a port number
        log.warning("metrics are off: cannot listen on %s:%d: %s", address, port, exc)
        return None
    log.info("metrics on http://%s:%d/metrics", address, port)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return stop
