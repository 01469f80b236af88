"""The alerting rules in ``deploy/prometheus/alerts.yml`` query only metrics the code defines.

Each rule's expression is parsed with a real PromQL parser and every metric it selects must be
defined by a metrics module (or be Prometheus' own ``up``); label values it matches must be ones
the code uses; every rule says how bad it is and points at its section of docs/operations.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from test_grafana import PROMETHEUS_BUILTINS, defined_metrics, queried_metrics

PROJECT = Path(__file__).resolve().parents[2]
RULES = PROJECT / "deploy" / "prometheus" / "alerts.yml"
OPERATIONS = PROJECT / "docs" / "operations.md"


def rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def test_there_are_alerts_for_stuck_leagues_and_expired_leases() -> None:
    names = {rule["alert"] for rule in rules()}
    assert {"SixnimmtLeagueStalled", "SixnimmtLeasesExpiring", "SixnimmtLeasesLost"} <= names
    assert len(names) == len(rules()), "alert names are unique"


@pytest.mark.parametrize("rule", rules(), ids=[r["alert"] for r in rules()])
def test_every_rule_queries_known_metrics_and_links_its_runbook(rule: dict[str, Any]) -> None:
    known = defined_metrics() | PROMETHEUS_BUILTINS
    names = queried_metrics(rule["expr"])
    assert names and set(names) <= known, f"{rule['alert']}: unknown {sorted(set(names) - known)}"
    assert rule["labels"]["severity"] in {"info", "warning", "critical"}
    assert rule["annotations"]["summary"]
    page, _, anchor = rule["annotations"]["runbook"].partition("#")
    assert page == "docs/operations.md"
    headings = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in OPERATIONS.read_text().splitlines()
        if line.startswith("#")
    }
    assert anchor in headings, f"{rule['alert']}: no section #{anchor} in docs/operations.md"


def test_label_values_in_rules_are_ones_the_code_uses() -> None:
    from referee.server import metrics as referee_metrics
    from workers import metrics
    from workers.queue.messages import Refusal

    reasons = {*metrics.REQUEUE_REASONS, *(r.value for r in Refusal), *referee_metrics.REFUSALS}
    used: dict[str, set[str]] = {"reason": reasons, "outcome": {"ok", "failed"}}
    used["job"] = {"sixnimmt-worker", "sixnimmt-referee", "sixnimmt-dashboard"}
    for rule in rules():

        def visit(node: Any, rule: dict[str, Any] = rule) -> None:
            if isinstance(node, promql_parser.VectorSelector):
                for matcher in node.matchers.matchers:
                    if matcher.name in used:
                        # A regular expression here is an alternation of values: each must be one.
                        for value in matcher.value.split("|"):
                            assert value in used[matcher.name], (rule["alert"], matcher.name, value)

        promql_parser.walk(promql_parser.parse(rule["expr"]), visit)
