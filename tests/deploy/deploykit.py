"""Helpers of the deployment tests: render the kustomizations, read containers' settings, parse the
Dockerfile and the .dockerignore. Nothing here needs a cluster, a container engine or a network."""

from __future__ import annotations

import base64
import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kustomize_lite
import yaml
from kubernetes_validate.utils import latest_version, major_minor

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
KUSTOMIZATIONS = {
    "base": K8S / "base",
    "monitoring": K8S / "monitoring",
    "dev": K8S / "overlays" / "dev",
    "production": K8S / "overlays" / "production",
}
OVERLAYS = ("dev", "production")
KUBERNETES_VERSIONS = ("1.30", major_minor(latest_version()))
"""The oldest version the manifests need (securityContext.appArmorProfile is 1.30) and the newest
kubernetes-validate ships (1.37 with kubernetes-validate 1.37.0)."""
CRD_KINDS = {"ServiceMonitor": "monitoring.coreos.com/v1"}
"""Custom resources: kubernetes-validate has no schema for them; test_deploy_manifests checks them."""
IMAGE = "sixnimmt-arena"
COMPONENTS = ("referee", "worker", "dashboard", "api", "migrate")
APP_UID = 10001
SECRET = "sixnimmt-secrets"
NON_SETTINGS_ENV = {"PGSSLMODE"}
"""Environment variables of our containers that are not SIXNIMMT_* settings (libpq reads PGSSLMODE)."""


# -- rendering ------------------------------------------------------------------------------------


def kustomize_command() -> list[str] | None:
    """A real kustomize on this machine: ``kustomize build`` or ``kubectl kustomize``, else None."""
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


@functools.cache
def render_with_binary(name: str) -> tuple[dict[str, Any], ...]:
    command = kustomize_command()
    assert command is not None
    out = subprocess.run(
        [*command, str(KUSTOMIZATIONS[name])], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return tuple(doc for doc in yaml.safe_load_all(out) if doc)


@functools.cache
def render_with_python(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(kustomize_lite.build(KUSTOMIZATIONS[name]))


def render(name: str) -> tuple[dict[str, Any], ...]:
    """The kustomization's output: a real kustomize where there is one, else kustomize_lite."""
    return render_with_binary(name) if kustomize_command() else render_with_python(name)


def renderer() -> str:
    command = kustomize_command()
    return " ".join(command) if command else "tests/deploy/kustomize_lite.py"


def by_kind(objs: tuple[dict[str, Any], ...], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def find(objs: tuple[dict[str, Any], ...], kind: str, prefix: str) -> dict[str, Any]:
    """The one object of ``kind`` named ``prefix`` or ``prefix-<hash>``."""
    found = [
        o
        for o in objs
        if o["kind"] == kind
        and re.fullmatch(rf"{re.escape(prefix)}(-[a-z0-9]{{10}})?", o["metadata"]["name"])
    ]
    assert len(found) == 1, f"{kind} {prefix}: {len(found)} found"
    return found[0]


# -- files ----------------------------------------------------------------------------------------


def yaml_files() -> list[Path]:
    return sorted(p for p in K8S.rglob("*") if p.suffix in (".yaml", ".yml"))


def manifest_files() -> list[Path]:
    """Files of Kubernetes objects: everything but kustomizations and patches (partial objects)."""
    return [p for p in yaml_files() if p.name != "kustomization.yaml" and p.parent.name != "patches"]


def load_all(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


# -- workloads ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One of our pod templates (referee, worker, dashboard, api, migrate) in a rendered kustomization."""

    component: str
    owner: dict[str, Any]
    pod: dict[str, Any]
    """The pod template (metadata and spec)."""

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.pod["spec"])

    @property
    def container(self) -> dict[str, Any]:
        (container,) = self.pod["spec"]["containers"]
        return dict(container)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.pod["metadata"]["labels"])


def workloads(objs: tuple[dict[str, Any], ...]) -> dict[str, Workload]:
    """Our pod templates by component (app.kubernetes.io/name=sixnimmt-arena)."""
    found: dict[str, Workload] = {}
    for obj in objs:
        if obj["kind"] not in ("Deployment", "StatefulSet", "Job", "DaemonSet"):
            continue
        pod = obj["spec"]["template"]
        labels = pod["metadata"].get("labels", {})
        if labels.get("app.kubernetes.io/name") != "sixnimmt-arena":
            continue
        component = labels["app.kubernetes.io/component"]
        assert component not in found, f"two workloads for {component}"
        found[component] = Workload(component, obj, pod)
    return found


@dataclass(frozen=True)
class External:
    """A value from a Secret or ConfigMap that is not in the rendered output (made outside Git)."""

    kind: str
    name: str
    key: str

    def __str__(self) -> str:
        return f"<{self.kind} {self.name}/{self.key}>"


def container_env(container: dict[str, Any], objs: tuple[dict[str, Any], ...]) -> dict[str, str | External]:
    """The environment a container starts with, from its envFrom and env, as Kubernetes builds it."""
    configmaps = by_kind(objs, "ConfigMap")
    secrets = by_kind(objs, "Secret")

    def secret_data(name: str) -> dict[str, str] | None:
        if name not in secrets:
            return None
        return {k: base64.b64decode(v).decode() for k, v in secrets[name].get("data", {}).items()}

    env: dict[str, str | External] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(configmaps[source["configMapRef"]["name"]]["data"])
        else:
            data = secret_data(source["secretRef"]["name"])
            assert data is not None, f"envFrom an external Secret {source}: its names are invisible here"
            env.update(data)
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
            continue
        ref = item["valueFrom"]
        if "secretKeyRef" in ref:
            name, key = ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"]
            data = secret_data(name)
            env[item["name"]] = External("Secret", name, key) if data is None else data[key]
        elif "configMapKeyRef" in ref:
            name, key = ref["configMapKeyRef"]["name"], ref["configMapKeyRef"]["key"]
            env[item["name"]] = configmaps[name]["data"][key]
        else:
            raise AssertionError(f"unexpected valueFrom {ref}")
    return env


def settings_environ(env: dict[str, str | External]) -> dict[str, str]:
    """The env as referee.settings.load reads it; an external secret stands in as a placeholder."""
    return {k: (v if isinstance(v, str) else f"external:{v}") for k, v in env.items()}


def container_port(container: dict[str, Any], name_or_number: str | int) -> int:
    if isinstance(name_or_number, int):
        return name_or_number
    (port,) = [p["containerPort"] for p in container.get("ports", []) if p["name"] == name_or_number]
    return int(port)


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels and matchExpressions with In, NotIn, Exists, DoesNotExist)."""
    if not all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


# -- the Dockerfile and the build context ---------------------------------------------------------


@dataclass
class Instruction:
    keyword: str
    value: str
    flags: dict[str, str]


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction]

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


def dockerfile() -> tuple[dict[str, str], list[Stage]]:
    """(global ARGs with defaults, stages) of the Dockerfile: continuations joined, comments dropped."""
    lines: list[str] = []
    pending = ""
    for raw in (REPO / "Dockerfile").read_text().splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends in a line continuation"
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        flags: dict[str, str] = {}
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            key, _, value = flag[2:].partition("=")
            flags[key] = value
        if keyword == "ARG" and not stages:
            key, _, default = rest.partition("=")
            args[key] = default
            continue
        if keyword == "FROM":
            parts = rest.split()
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m.group(1) or m.group(2)], parts[0])
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(base, name, []))
            continue
        assert stages, f"{keyword} before the first FROM"
        stages[-1].instructions.append(Instruction(keyword, rest.strip(), flags))
    return args, stages


def dockerignore_patterns() -> list[tuple[bool, re.Pattern[str]]]:
    """(negated, regex) per .dockerignore line, in order (Docker's patternmatcher semantics for
    the forms used: ``*``, ``**``, ``?``, ``!`` exceptions; a pattern matching a directory also
    covers everything under it)."""
    patterns: list[tuple[bool, re.Pattern[str]]] = []
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:].strip() if negated else line
        pattern = pattern.strip("/")
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex += "(.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                regex += ".*"
                i += 2
            elif pattern[i] == "*":
                regex += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                regex += "[^/]"
                i += 1
            else:
                regex += re.escape(pattern[i])
                i += 1
        patterns.append((negated, re.compile(regex)))
    return patterns


def ignored(relative: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether Docker leaves ``relative`` (a path in the context, with ``/``) out of the context."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for negated, regex in patterns:
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            excluded = not negated
    return excluded


def build_context() -> Iterator[str]:
    """Every file of the repository (as the working tree has it) that the build context holds."""
    patterns = dockerignore_patterns()
    for root, dirs, files in os.walk(REPO):
        top = Path(root) == REPO
        dirs[:] = sorted(d for d in dirs if not (top and d in (".git", ".venv")))
        for name in sorted(files):
            relative = (Path(root) / name).relative_to(REPO).as_posix()
            if not ignored(relative, patterns):
                yield relative
