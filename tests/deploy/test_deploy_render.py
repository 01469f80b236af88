"""The kustomizations render, and tests/deploy/kustomize_lite.py renders them exactly as kustomize does.

Where a real ``kustomize`` or ``kubectl`` is installed, the other deployment tests validate its
output, and this test holds the Python renderer to it, object for object (hash suffixes included);
where none is, the Python renderer's output is what they validate.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import deploykit as dk
import kustomize_lite
import pytest
import yaml


def _key(obj: dict) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


@pytest.mark.parametrize("name", list(dk.KUSTOMIZATIONS))
def test_python_renderer_matches_kustomize(name: str) -> None:
    if dk.kustomize_command() is None:
        pytest.skip("no kustomize or kubectl here: the tests validate kustomize_lite's output alone")
    real = {_key(o): o for o in dk.render_with_binary(name)}
    mine = {_key(o): o for o in dk.render_with_python(name)}
    assert sorted(mine) == sorted(real)
    for key, obj in real.items():
        if mine[key] != obj:
            diff = difflib.unified_diff(
                yaml.safe_dump(obj).splitlines(), yaml.safe_dump(mine[key]).splitlines(), lineterm=""
            )
            pytest.fail(f"{key} differs from {dk.renderer()}:\n" + "\n".join(diff))


@pytest.mark.parametrize("name", list(dk.KUSTOMIZATIONS))
def test_each_kustomization_renders_with_namespaced_objects(name: str) -> None:
    objs = dk.render(name)
    namespaces = {
        o["metadata"].get("namespace") for o in objs if o["kind"] not in kustomize_lite.CLUSTER_SCOPED
    }
    expected = {"dev": {"sixnimmt-dev"}, "production": {"sixnimmt"}}.get(name, {None})
    assert namespaces == expected
    for obj in objs:
        if obj["kind"] == "Namespace":
            assert obj["metadata"]["name"] in expected


def test_the_renderer_refuses_what_it_does_not_implement(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("namePrefix: x-\nresources: []\n")
    with pytest.raises(kustomize_lite.KustomizeError, match="namePrefix"):
        kustomize_lite.build(tmp_path)
    (tmp_path / "kustomization.yaml").write_text(
        "patches:\n  - path: p.yaml\n    target: {kind: Deployment}\n"
    )
    with pytest.raises(kustomize_lite.KustomizeError, match="path"):
        kustomize_lite.build(tmp_path)


def test_generated_names_follow_content_and_references_follow_names(tmp_path: Path) -> None:
    """A changed setting renames the ConfigMap (its hash), and the pods that use it follow."""
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [pod.yaml]\nconfigMapGenerator:\n  - name: cfg\n    literals: [A=1]\n"
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec:\n  containers:\n    - name: c\n      image: i\n      envFrom: [{configMapRef: {name: cfg}}]\n"
    )
    first = kustomize_lite.build(tmp_path)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [pod.yaml]\nconfigMapGenerator:\n  - name: cfg\n    literals: [A=2]\n"
    )
    second = kustomize_lite.build(tmp_path)
    names = [dk.by_kind(tuple(r), "ConfigMap") for r in (first, second)]
    assert len(names[0]) == len(names[1]) == 1 and names[0].keys() != names[1].keys()
    for result, cms in zip((first, second), names, strict=True):
        (pod,) = [o for o in result if o["kind"] == "Pod"]
        assert pod["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"] == next(iter(cms))
