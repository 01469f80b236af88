"""docs/dashboard.md's patch that switches the Play page on in Kubernetes: it applies to the
rendered dashboard Deployment, passes the Kubernetes schema, and gives the dashboard exactly the
worker's sandbox privileges, a writable store, Play on and one replica. The base leaves Play off."""

from __future__ import annotations

import copy
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from referee.settings import load

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dashboard.md"


@pytest.fixture(scope="module")
def kit() -> Any:
    """The deployment tests' kit (tests/deploy/deploykit.py and its kustomize_lite)."""
    pytest.importorskip("kubernetes_validate")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
    try:
        return importlib.import_module("deploykit"), importlib.import_module("kustomize_lite")
    finally:
        sys.path.pop(0)


def documented_patch() -> dict[str, Any]:
    text = DOCS.read_text()
    block = text[text.index("**Play on in Kubernetes.**") :].split("```yaml\n", 1)[1].split("```", 1)[0]
    return dict(yaml.safe_load(block))


def test_the_base_leaves_play_off(kit: Any) -> None:
    dk, _ = kit
    dashboard = dk.workloads(dk.render("production"))["dashboard"]
    (container,) = dashboard.owner["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["SIXNIMMT_PLAY"] == "off"
    assert load({"SIXNIMMT_PLAY": env["SIXNIMMT_PLAY"]}).play == "off"


def test_the_documented_play_patch_is_valid_and_has_the_workers_sandbox(kit: Any) -> None:
    import kubernetes_validate

    dk, kustomize_lite = kit
    objs = dk.render("production")
    dashboard = copy.deepcopy(dk.workloads(objs)["dashboard"].owner)
    worker = dk.workloads(objs)["worker"].owner
    patch = documented_patch()
    assert (patch["kind"], patch["metadata"]["name"]) == ("Deployment", dashboard["metadata"]["name"])
    kustomize_lite._merge(dashboard, {"spec": patch["spec"]}, "docs/dashboard.md")
    for version in dk.KUBERNETES_VERSIONS:
        kubernetes_validate.validate(dashboard, version, strict=True)
    pod = dashboard["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (worker_container,) = worker["spec"]["template"]["spec"]["containers"]
    assert dashboard["spec"]["replicas"] == 1
    assert container["securityContext"] == worker_container["securityContext"]
    assert (
        pod["securityContext"]["runAsUser"]
        == worker["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    )
    env = {e["name"]: e for e in container["env"]}
    assert env["SIXNIMMT_PLAY"]["value"] == "on"
    assert env["SIXNIMMT_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["key"] == "database-url"
    (tmp,) = [v for v in pod["volumes"] if v["name"] == "tmp"]
    (worker_tmp,) = [v for v in worker["spec"]["template"]["spec"]["volumes"] if v["name"] == "tmp"]
    assert tmp == worker_tmp
