"""deploy/k8s against the Kubernetes schemas (kubernetes-validate --strict) and yamllint, offline.

Every manifest file is validated on its own, and every kustomization's rendered output as a whole
(kustomize or kubectl where installed, else tests/deploy/kustomize_lite.py; see test_deploy_render).
Custom resources (the ServiceMonitor) have no schema in kubernetes-validate: they are checked
against the objects they refer to in test_deploy_consistency instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import deploykit as dk
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError
from yamllint import linter
from yamllint.config import YamlLintConfig


def _validate(doc: dict[str, Any], version: str, where: str) -> None:
    kind = doc["kind"]
    if kind in dk.CRD_KINDS:
        assert doc["apiVersion"] == dk.CRD_KINDS[kind]
        # Not validated here: no schema ships for it (asserted in the next test).
        return
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except ValidationError as exc:
        path = ".".join(str(p) for p in exc.path)
        name = f"{kind}/{doc['metadata']['name']}"
        raise AssertionError(
            f"{where}: {name} is invalid for Kubernetes {version}: {path}: {exc.message}"
        ) from None


@pytest.mark.parametrize("version", dk.KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", dk.manifest_files(), ids=lambda p: str(p.relative_to(dk.K8S)))
def test_every_manifest_file_is_valid(path: Path, version: str) -> None:
    docs = dk.load_all(path)
    assert docs, f"{path} holds no object"
    for doc in docs:
        _validate(doc, version, str(path.relative_to(dk.REPO)))


@pytest.mark.parametrize("version", dk.KUBERNETES_VERSIONS)
@pytest.mark.parametrize("name", list(dk.KUSTOMIZATIONS))
def test_every_rendered_kustomization_is_valid(name: str, version: str) -> None:
    objs = dk.render(name)
    assert objs
    for doc in objs:
        _validate(doc, version, f"{name} rendered by {dk.renderer()}")


@pytest.mark.parametrize("kind", sorted(dk.CRD_KINDS))
def test_custom_resources_are_skipped_because_no_schema_ships_for_them(kind: str) -> None:
    """If kubernetes-validate ever ships a schema for them, drop them from CRD_KINDS and validate."""
    doc = {"apiVersion": dk.CRD_KINDS[kind], "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    with pytest.raises(SchemaNotFoundError):
        kubernetes_validate.validate(doc, dk.KUBERNETES_VERSIONS[-1], strict=True)


def test_strict_validation_catches_a_misspelt_field() -> None:
    """The validator really is strict: an unknown field in a container fails."""
    (deployment,) = [d for d in dk.load_all(dk.K8S / "base" / "referee.yaml") if d["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(ValidationError, match="readinesProbe"):
        kubernetes_validate.validate(deployment, dk.KUBERNETES_VERSIONS[0], strict=True)


def test_yamllint_passes_on_every_yaml_file() -> None:
    config = YamlLintConfig(file=str(dk.REPO / "deploy" / ".yamllint"))
    problems = []
    for path in dk.yaml_files():
        for problem in linter.run(path.read_text(), config, str(path)):
            problems.append(f"{path.relative_to(dk.REPO)}:{problem.line}:{problem.column}: {problem}")
    assert not problems, "\n".join(problems)


def test_every_file_is_used_by_a_kustomization() -> None:
    """No manifest, patch or generator input lies around unused (and so untested)."""
    used: set[Path] = set()
    for directory in dk.KUSTOMIZATIONS.values():
        k = yaml.safe_load((directory / "kustomization.yaml").read_text())
        used.add(directory / "kustomization.yaml")
        for entry in k.get("resources", []):
            used.add((directory / entry).resolve())
        used |= {(directory / p["path"]).resolve() for p in k.get("patches", [])}
        for generator in k.get("configMapGenerator", []) + k.get("secretGenerator", []):
            used |= {(directory / e).resolve() for e in generator.get("envs", [])}
            used |= {(directory / f.rpartition("=")[2]).resolve() for f in generator.get("files", [])}
    files = {p.resolve() for p in dk.K8S.rglob("*") if p.is_file()}
    for shared in ("base", "monitoring"):
        assert dk.KUSTOMIZATIONS[shared].resolve() in used, f"no overlay includes {shared}"
    unused = sorted(str(p.relative_to(dk.REPO)) for p in files - used)
    assert not unused, f"files no kustomization uses: {unused}"
