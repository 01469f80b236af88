"""Helpers for the observability tests: scrape a real ``/metrics`` endpoint, read the in-process registry."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from testkit import free_port as free_port  # re-exported for this kit's users
from testkit import wait_for as wait_for

ALLOWED_LABELS = {
    "variant",
    "termination",
    "kind",
    "outcome",
    "task",
    "reason",
    "operation",
    "queue",
    "route",
    "method",
    "status",  # the dashboard's requests: the route is the template, never an id
}
"""Every label a sixnimmt metric may carry: small, bounded sets of values (``le`` is the histograms')."""


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


class Scrape:
    """One exposition, parsed: the samples, and the raw text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples = [
            Sample(s.name, dict(s.labels), s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels`` (0 if none)."""
        return sum(
            s.value
            for s in self.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        )

    def has(self, name: str) -> bool:
        return any(s.name == name for s in self.samples)

    def ours(self) -> Iterator[Sample]:
        """The project's samples (not the process or Python collector's)."""
        return (s for s in self.samples if s.name.startswith("sixnimmt_"))


def scrape(url: str, timeout: float = 10.0) -> Scrape:
    """GET a ``/metrics`` endpoint over HTTP."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.status == 200
        return Scrape(response.read().decode())


def local(name: str, **labels: str) -> float:
    """A sample of this process's default registry (0 if it does not exist yet)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def assert_histogram_consistent(scraped: Scrape, name: str, **labels: str) -> None:
    """Buckets are cumulative, and the ``+Inf`` bucket equals the count."""
    buckets = sorted(
        (float(s.labels["le"]), s.value)
        for s in scraped.samples
        if s.name == f"{name}_bucket" and all(s.labels.get(k) == v for k, v in labels.items())
    )
    assert buckets, f"no buckets of {name} {labels}"
    counts = [count for _, count in buckets]
    assert counts == sorted(counts), f"{name} buckets are not cumulative: {buckets}"
    assert buckets[-1][0] == float("inf")
    assert counts[-1] == scraped.value(f"{name}_count", **labels)


def assert_bounded(scraped: Scrape, forbidden: list[str]) -> None:
    """Only the allowed labels, with bounded values, and none of the ids or names in ``forbidden``."""
    from referee.driver import FaultKind
    from referee.rules.core import Termination
    from referee.rules.registry import VARIANTS

    values = {
        "variant": {v.name for v in VARIANTS} | {""},
        "kind": {k.value for k in FaultKind},
        "termination": {t.value for t in Termination} | {"aborted"},
        # blocks, tasks, reconciliation passes, and validations of uploaded bots (valid, invalid, failed)
        "outcome": {"stored", "raced", "skipped", "failed", "lost", "succeeded", "retried", "ok"}
        | {"valid", "invalid"},
    }
    for sample in scraped.ours():
        names = set(sample.labels) - {"le"}
        assert names <= ALLOWED_LABELS, f"{sample.name} has unexpected labels {names - ALLOWED_LABELS}"
        for label, allowed in values.items():
            if label in sample.labels:
                assert sample.labels[label] in allowed, f"{sample.name}: {label}={sample.labels[label]!r}"
    for text in forbidden:
        assert text not in scraped.text, f"{text!r} leaked into the metrics"
