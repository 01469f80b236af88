"""The Grafana dashboards under ``deploy/grafana`` query only metrics that the code defines.

Every PromQL expression of every panel (and every template variable's query) is parsed with a
real PromQL parser, after Grafana's variables are replaced by plain values, and the metric name
of each vector selector must be one that a metrics module defines: ``referee.server.metrics``,
``workers.metrics`` and, once it exists, ``dashboard.metrics``. Names come from the modules'
metric objects, registries and custom collectors, with the sample suffixes of each metric type.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
from obskit import ALLOWED_LABELS
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

DASHBOARDS = sorted(
    (Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "dashboards").glob("*.json")
)
METRIC_MODULES = [
    "referee.server.metrics",
    "workers.metrics",
    "dashboard.metrics",
    "api.metrics",
    "workers.queue.validating",
]
PROMETHEUS_BUILTINS = {"up"}
"""Series Prometheus itself records for every scrape target."""
GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "6h",
    "$variant": ".*",
}
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
}


def metric_modules() -> Iterator[Any]:
    """The metrics modules there are (the dashboard's may not exist yet)."""
    for name in METRIC_MODULES:
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def sample_names(name: str, kind: str) -> set[str]:
    return {name, *(name + suffix for suffix in SUFFIXES.get(kind, ()))}


def families_of(value: Any) -> Iterable[Any]:
    """The metric families a module attribute declares: a metric, a registry or a custom collector."""
    if isinstance(value, CollectorRegistry):
        return value.collect()
    if isinstance(value, type) or not callable(getattr(value, "describe", None)):
        return ()
    return value.describe()  # type: ignore[no-any-return]


def defined_metrics() -> set[str]:
    """Every sample name the metrics modules can expose."""
    from workers.metrics import QueueDepth

    names: set[str] = set()
    collectors = [QueueDepth("redis://127.0.0.1:1/0", [])]  # collected on scrape, so described here
    for module in metric_modules():
        collectors += vars(module).values()
    for value in collectors:
        for family in families_of(value):
            names |= sample_names(family.name, family.type)
    return names


def expressions(board: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and every query variable of a dashboard."""

    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for panel in items:
            yield panel
            yield from panels(panel.get("panels", []))

    for panel in panels(board.get("panels", [])):
        for target in panel.get("targets", []):
            yield f"panel {panel.get('title')!r} {target.get('refId')}", target["expr"]
    for variable in board.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            # label_values(selector, label) asks Prometheus for the selector's series
            match = re.fullmatch(r"\s*label_values\((.+),\s*\w+\s*\)\s*", text)
            yield f"variable {variable['name']!r}", match.group(1) if match else text


def queried_metrics(expr: str) -> list[str]:
    """The metric names an expression selects; a syntax error raises ``ValueError``."""
    for variable, value in sorted(GRAFANA_VARIABLES.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(variable, value)
    names: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            names.append(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def test_there_are_dashboards_for_throughput_latency_faults_and_workers() -> None:
    titles = {json.loads(path.read_text())["title"] for path in DASHBOARDS}
    assert {t.split(" / ")[1] for t in titles} == {
        "League throughput",
        "Latency percentiles",
        "Faults",
        "Worker health",
        "Platform API",
    }
    uids = [json.loads(path.read_text())["uid"] for path in DASHBOARDS]
    assert len(set(uids)) == len(uids)


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.stem for p in DASHBOARDS])
def test_every_metric_a_panel_queries_exists_in_the_code(path: Path) -> None:
    known = defined_metrics() | PROMETHEUS_BUILTINS
    board = json.loads(path.read_text())
    found = list(expressions(board))
    assert len(found) >= 5
    for where, expr in found:
        names = queried_metrics(expr)
        assert names, f"{path.name} {where} selects no metric: {expr}"
        unknown = set(names) - known
        assert not unknown, f"{path.name} {where} queries metrics no module defines: {sorted(unknown)}"


def test_every_referee_and_worker_metric_is_on_a_dashboard() -> None:
    from referee.server import metrics as referee_metrics
    from workers import metrics as worker_metrics
    from workers.metrics import QueueDepth

    queried = {
        name
        for path in DASHBOARDS
        for _, expr in expressions(json.loads(path.read_text()))
        for name in queried_metrics(expr)
    }
    ours = [*vars(referee_metrics).values(), *vars(worker_metrics).values(), QueueDepth("redis://x", [])]
    missing = [
        family.name
        for value in ours
        if not isinstance(value, CollectorRegistry)  # the default registry holds others' metrics too
        for family in families_of(value)
        if not sample_names(family.name, family.type) & queried
    ]
    assert not missing, f"metrics on no dashboard: {missing}"


def test_the_parser_catches_unknown_names_and_bad_syntax() -> None:
    assert queried_metrics('sum by (le) (rate(nope_bucket{variant=~"$variant"}[$__rate_interval])) / up') == [
        "nope_bucket",
        "up",
    ]
    with pytest.raises(ValueError):
        queried_metrics("sum(rate(sixnimmt_referee_faults_total[5m])")


def test_metric_labels_are_small_bounded_sets() -> None:
    """No metric has a label that could hold an id: only variant, outcome, kind and the like."""
    for module in metric_modules():
        for name, value in vars(module).items():
            if isinstance(value, MetricWrapperBase):
                labels = set(value._labelnames)
                assert labels <= ALLOWED_LABELS, (
                    f"{module.__name__}.{name} has labels {labels - ALLOWED_LABELS}"
                )
