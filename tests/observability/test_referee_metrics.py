"""The referee's metrics, scraped over HTTP from a real ``sixnimmt referee serve`` that played real matches.

Bots are real processes (random bots and one that always plays an illegal card), so the counts on
``/metrics`` can be checked exactly against what the referee reported for each match.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from obskit import assert_bounded, assert_histogram_consistent, free_port, scrape, wait_for

from arena.matches import MatchPlan, local_referee, play_matches
from referee.server import metrics

ILLEGAL_BOT = """
from bot_sdk import ClassicBot

class Illegal(ClassicBot):
    def choose_card(self, view):
        return 1000
"""


def test_matches_decisions_and_faults_are_counted_with_bounded_labels(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    (tmp_path / "illegal.py").write_text(ILLEGAL_BOT)
    specs = {"alice": "random", "bob": "random", "mallory": str(tmp_path / "illegal.py")}
    plans = [MatchPlan(("alice", "bob", "mallory"), seed) for seed in (1, 2, 3)]
    config = {"players": 3, "hands": 1, "target": None}
    with local_referee(env={"SIXNIMMT_REFEREE_METRICS_PORT": str(port)}) as client:
        before = scrape(url)
        assert before.value("sixnimmt_referee_matches_running") == 0
        run = play_matches(specs, plans, variant="classic", config=config, client=client, max_faults=4)
        assert [m.status for m in run.matches] == ["finished"] * 3
        wait_for(
            lambda: scrape(url).value("sixnimmt_referee_bot_connections") == 0, 10, "the streams to close"
        )
        after = scrape(url)

    def moved(name: str, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    terminations = Counter(m.transcript["outcome"]["termination"] for m in run.matches)
    for termination, count in terminations.items():
        assert moved("sixnimmt_referee_matches_total", variant="classic", termination=termination) == count
    assert moved("sixnimmt_referee_matches_total") == 3
    assert moved("sixnimmt_referee_match_duration_seconds_count", variant="classic") == 3
    assert after.value("sixnimmt_referee_matches_running", variant="classic") == 0

    seats = [seat for match in run.matches for seat in match.seats]
    illegal = sum(seat.faults.get("illegal", 0) for seat in seats)
    assert (
        illegal > 0 and moved("sixnimmt_referee_faults_total", variant="classic", kind="illegal") == illegal
    )
    for kind in ("timeout", "crash", "disconnect", "protocol"):
        assert moved("sixnimmt_referee_faults_total", variant="classic", kind=kind) == 0
    assert moved("sixnimmt_referee_forfeits_total", variant="classic") == sum(s.forfeited for s in seats) > 0
    # Every reply is timed, the illegal ones too; forfeited seats are no longer asked.
    replies = sum(seat.decisions for seat in seats) + illegal
    assert moved("sixnimmt_referee_decision_latency_seconds_count", variant="classic") == replies
    assert moved("sixnimmt_referee_decision_latency_seconds_sum", variant="classic") > 0
    assert_histogram_consistent(after, "sixnimmt_referee_decision_latency_seconds", variant="classic")
    assert_histogram_consistent(after, "sixnimmt_referee_match_duration_seconds", variant="classic")

    forbidden = [m.match_id for m in run.matches] + list(specs) + [str(tmp_path)]
    assert_bounded(after, forbidden)


def test_the_endpoint_is_off_with_port_0_and_a_taken_port_only_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert metrics.start_exporter(0) is None
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        with caplog.at_level(logging.WARNING):
            assert metrics.start_exporter(taken.getsockname()[1]) is None
    assert "metrics are off" in caplog.text
    port = free_port()
    stop = metrics.start_exporter(port)
    assert stop is not None
    try:
        assert scrape(f"http://127.0.0.1:{port}/metrics").has("sixnimmt_referee_faults_total")
    finally:
        stop()


def test_the_referee_runs_without_prometheus_client() -> None:
    """A bot author's base install has no prometheus-client; ``bot play`` still needs the referee."""
    code = (
        "import sys; sys.modules['prometheus_client'] = None\n"
        "import referee.server.app\n"
        "from referee.server import metrics\n"
        "metrics.FAULTS.labels('classic', 'timeout').inc()\n"
        "metrics.DECISION_SECONDS.labels('classic').observe(0.5)\n"
        "metrics.BOT_CONNECTIONS.dec()\n"
        "assert metrics.start_exporter(9464) is None\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr
    assert "prometheus-client is not installed" in done.stderr


def test_decision_times_counted_in_batches_match_one_observe_each() -> None:
    """``observe_many`` leaves a histogram exactly as ``observe`` per value does (bucket edges
    included), and a child without prometheus-client's bucket layout gets one ``observe`` each."""
    from prometheus_client import CollectorRegistry, Histogram

    registry = CollectorRegistry()
    one = Histogram("one_seconds", "", ["variant"], buckets=metrics.DECISION_BUCKETS, registry=registry)
    many = Histogram("many_seconds", "", ["variant"], buckets=metrics.DECISION_BUCKETS, registry=registry)
    values = [0.0, 0.001, 0.0010001, 0.0025, 0.3, 2, 30, 31, 1e9, *(i / 997 for i in range(1000))]
    for value in values:
        one.labels("classic").observe(value)
    metrics.observe_many(many.labels("classic"), values)

    def samples(name: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
        (family,) = (f for f in registry.collect() if f.name == name)
        return [
            (s.name.removeprefix(name), tuple(sorted(s.labels.items())), s.value)
            for s in family.samples
            if not s.name.endswith("_created")
        ]

    by_one, by_many = samples("one_seconds"), samples("many_seconds")
    assert [s[:2] for s in by_one] == [s[:2] for s in by_many]
    assert [s[2] for s in by_one] == pytest.approx([s[2] for s in by_many])
    assert dict((n, v) for n, _, v in samples("many_seconds"))["_count"] == len(values)

    class Plain:
        def __init__(self) -> None:
            self.seen: list[float] = []

        def observe(self, value: float) -> None:
            self.seen.append(value)

    plain = Plain()
    metrics.observe_many(plain, values[:5])
    assert plain.seen == values[:5]
