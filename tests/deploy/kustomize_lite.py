"""A small kustomize renderer for exactly the subset deploy/k8s uses, for machines without kustomize.

The tests render each overlay with a real ``kustomize build`` or ``kubectl kustomize`` when one is on
the PATH, and compare it with this renderer's output (``test_deploy_render.py``); without one, this
renderer's output is what gets validated. Anything outside the subset raises :class:`KustomizeError`
instead of being approximated:

- ``resources``: YAML files (several documents each) and directories holding a kustomization;
- ``namespace``: set on every namespaced resource;
- ``configMapGenerator`` / ``secretGenerator``: ``literals``, ``envs`` (``KEY=VALUE`` lines, ``#``
  comments), ``files`` (``path`` or ``key=path``), ``behavior`` (create, merge, replace), ``options``
  (``disableNameSuffixHash``, ``labels``, ``annotations``); names get kustomize's content hash at the
  end of the build, and references to them in pod specs are renamed;
- ``patches``: ``path:`` entries holding one strategic-merge patch each, matched by kind and name;
  maps merge, ``null`` deletes a key, lists of containers, env, volumes, volume mounts and ports merge
  by their keys, every other list is replaced (no ``$patch`` directives, no JSON 6902, no targets);
- ``images``: ``name`` with ``newName``, ``newTag`` and ``digest``, on containers and init containers.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SUPPORTED = {
    "apiVersion",
    "kind",
    "resources",
    "namespace",
    "images",
    "configMapGenerator",
    "secretGenerator",
    "patches",
}
GENERATOR_KEYS = {"name", "behavior", "literals", "envs", "files", "options", "type"}
OPTION_KEYS = {"disableNameSuffixHash", "labels", "annotations"}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
    "RuntimeClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
}
MERGE_KEYS = {
    "containers": ("name",),
    "initContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "ports": ("containerPort", "port"),
    "imagePullSecrets": ("name",),
}
"""Strategic-merge keys of the lists this renderer merges (Kubernetes' own keys for these fields)."""


class KustomizeError(ValueError):
    """The kustomization uses something this renderer does not implement, or is wrong."""


@dataclass
class _Resource:
    obj: dict[str, Any]
    hashed: bool = False
    """A generated ConfigMap or Secret whose name gets the content hash at the end of the build."""
    base_name: str = field(default="")


def build(directory: Path | str) -> list[dict[str, Any]]:
    """Render the kustomization in ``directory`` like ``kustomize build`` (order aside)."""
    resources = _build(Path(directory))
    renames: dict[tuple[str, str | None, str], str] = {}
    for res in resources:
        if res.hashed:
            meta = res.obj["metadata"]
            new = f"{meta['name']}-{_hash(res.obj)}"
            renames[(res.obj["kind"], meta.get("namespace"), meta["name"])] = new
            meta["name"] = new
    for res in resources:
        _rename_references(res.obj, renames)
    return [res.obj for res in resources]


def _build(directory: Path) -> list[_Resource]:
    path = directory / "kustomization.yaml"
    if not path.is_file():
        raise KustomizeError(f"no kustomization.yaml in {directory}")
    k = yaml.safe_load(path.read_text()) or {}
    unknown = set(k) - SUPPORTED
    if unknown:
        raise KustomizeError(f"{path}: fields this renderer does not implement: {sorted(unknown)}")
    resources: list[_Resource] = []
    for entry in k.get("resources", []):
        target = directory / entry
        if target.is_dir():
            resources += _build(target)
        elif target.is_file():
            resources += [_Resource(doc) for doc in yaml.safe_load_all(target.read_text()) if doc]
        else:
            raise KustomizeError(f"{path}: resource {entry} does not exist")
    for kind, key in (("ConfigMap", "configMapGenerator"), ("Secret", "secretGenerator")):
        for generator in k.get(key, []):
            _generate(kind, generator, directory, resources)
    for patch in k.get("patches", []):
        _patch(patch, directory, resources)
    for image in k.get("images", []):
        _set_image(image, resources)
    if "namespace" in k:
        for res in resources:
            if res.obj["kind"] not in CLUSTER_SCOPED:
                res.obj["metadata"]["namespace"] = k["namespace"]
    seen: set[tuple[str, str | None, str]] = set()
    for res in resources:
        rid = (res.obj["kind"], res.obj["metadata"].get("namespace"), res.obj["metadata"]["name"])
        if rid in seen:
            raise KustomizeError(f"{path}: two resources are {rid}")
        seen.add(rid)
    return resources


# -- generators -----------------------------------------------------------------------------------


def _generate(kind: str, generator: dict[str, Any], directory: Path, resources: list[_Resource]) -> None:
    unknown = set(generator) - GENERATOR_KEYS
    options = generator.get("options", {})
    unknown |= {f"options.{o}" for o in set(options) - OPTION_KEYS}
    if unknown:
        raise KustomizeError(f"{kind} generator {generator.get('name')}: not implemented: {sorted(unknown)}")
    data: dict[str, str] = {}
    for literal in generator.get("literals", []):
        _put(data, *_split(literal, f"literal {literal!r}"))
    for env in generator.get("envs", []):
        for number, line in enumerate((directory / env).read_text().splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            _put(data, *_split(line, f"{env}:{number}"))
    for entry in generator.get("files", []):
        key, _, source = entry.rpartition("=") if "=" in entry else ("", "", entry)
        file = directory / source
        _put(data, key or file.name, file.read_text())
    behavior = generator.get("behavior", "create")
    name = generator["name"]
    existing = [r for r in resources if r.obj["kind"] == kind and r.obj["metadata"]["name"] == name]
    if behavior in ("merge", "replace"):
        if len(existing) != 1:
            raise KustomizeError(f"{kind} {name}: behavior {behavior} needs exactly one to change")
        target = existing[0].obj
        old = target.get("data", {})
        if kind == "Secret":
            data = {key: _base64(value) for key, value in data.items()}
        target["data"] = {**old, **data} if behavior == "merge" else data
        _add_metadata(target, options)
        if options.get("disableNameSuffixHash"):
            existing[0].hashed = False
        return
    if behavior != "create":
        raise KustomizeError(f"{kind} {name}: unknown behavior {behavior}")
    if existing:
        raise KustomizeError(f"{kind} {name} exists already (use behavior: merge or replace)")
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}}
    if kind == "Secret":
        obj["type"] = generator.get("type", "Opaque")
        obj["data"] = {key: _base64(value) for key, value in data.items()}
    else:
        obj["data"] = data
    _add_metadata(obj, options)
    resources.append(_Resource(obj, hashed=not options.get("disableNameSuffixHash", False), base_name=name))


def _base64(value: str) -> str:
    """Secret data as kustomize writes it: base64, wrapped at 70 characters when longer, each line
    ending in a newline (Kubernetes' decoder skips the newlines; the name hash does not)."""
    encoded = base64.b64encode(value.encode()).decode()
    if len(encoded) <= 70:
        return encoded
    return "".join(encoded[i : i + 70] + "\n" for i in range(0, len(encoded), 70))


def _split(item: str, where: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise KustomizeError(f"{where}: expected KEY=VALUE")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        raise KustomizeError(f"{where}: quoted values are not implemented")
    return key, value


def _put(data: dict[str, str], key: str, value: str) -> None:
    if key in data:
        raise KustomizeError(f"key {key} given twice")
    data[key] = value


def _add_metadata(obj: dict[str, Any], options: dict[str, Any]) -> None:
    for what in ("labels", "annotations"):
        if options.get(what):
            obj["metadata"].setdefault(what, {}).update(options[what])


def _hash(obj: dict[str, Any]) -> str:
    """kustomize's name suffix: SHA-256 of the object's JSON encoding as Go writes it, 10 characters.

    kustomize v5 (api/hasher) encodes kind, data, (Secret) type and a name it looks up with the
    single path element ``"metadata/name"``, which finds nothing: the name enters as ``""``. The
    comparison with a real kustomize in test_deploy_render.py keeps this honest.
    """
    encoded: dict[str, Any] = {"kind": obj["kind"], "name": "", "data": obj.get("data", {})}
    if obj["kind"] == "Secret":
        encoded["type"] = obj.get("type", "Opaque")
    text = json.dumps(encoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # Go's encoding/json escapes these for HTML safety; the hash is over Go's bytes.
    for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return digest.translate(str.maketrans("013ae", "ghkmt"))


# -- patches --------------------------------------------------------------------------------------


def _patch(entry: dict[str, Any], directory: Path, resources: list[_Resource]) -> None:
    if set(entry) != {"path"}:
        raise KustomizeError(f"patch {entry}: only `path:` entries are implemented")
    docs = [d for d in yaml.safe_load_all((directory / entry["path"]).read_text()) if d]
    if len(docs) != 1:
        raise KustomizeError(f"{entry['path']}: one strategic-merge patch per file")
    patch = docs[0]
    matches = [
        r
        for r in resources
        if r.obj["kind"] == patch["kind"] and r.obj["metadata"]["name"] == patch["metadata"]["name"]
    ]
    if len(matches) != 1:
        raise KustomizeError(f"{entry['path']}: {len(matches)} resources match, expected 1")
    body = {k: v for k, v in patch.items() if k not in ("apiVersion", "kind")}
    body["metadata"] = {k: v for k, v in patch["metadata"].items() if k != "name"}
    if not body["metadata"]:
        del body["metadata"]
    _merge(matches[0].obj, body, entry["path"])


def _merge(target: dict[str, Any], patch: dict[str, Any], where: str) -> None:
    for key, value in patch.items():
        if key.startswith("$"):
            raise KustomizeError(f"{where}: patch directive {key} is not implemented")
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value, where)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(target.get(key), list):
            _merge_list(target[key], value, MERGE_KEYS[key], where)
        else:
            target[key] = copy.deepcopy(value)


def _merge_list(target: list[Any], patch: list[Any], keys: tuple[str, ...], where: str) -> None:
    for item in patch:
        key = next((k for k in keys if isinstance(item, dict) and k in item), None)
        if key is None:
            raise KustomizeError(f"{where}: a list item without its merge key {keys}: {item}")
        match = next((t for t in target if isinstance(t, dict) and t.get(key) == item[key]), None)
        if match is None:
            target.append(copy.deepcopy(item))
        else:
            _merge(match, item, where)


# -- images and references ------------------------------------------------------------------------


def _pod_specs(node: Any) -> list[dict[str, Any]]:
    """Every dict holding ``containers``: pod specs in Deployments, StatefulSets, Jobs, ..."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            found.append(node)
        for value in node.values():
            found += _pod_specs(value)
    elif isinstance(node, list):
        for value in node:
            found += _pod_specs(value)
    return found


def split_image(image: str) -> tuple[str, str | None, str | None]:
    """``name[:tag][@digest]`` → (name, tag, digest); a registry port is part of the name."""
    rest, _, digest = image.partition("@")
    name, tag = rest, None
    head, sep, tail = rest.rpartition(":")
    if sep and "/" not in tail:
        name, tag = head, tail
    return name, tag, digest or None


def _set_image(entry: dict[str, Any], resources: list[_Resource]) -> None:
    unknown = set(entry) - {"name", "newName", "newTag", "digest"}
    if unknown:
        raise KustomizeError(f"images entry {entry}: not implemented: {sorted(unknown)}")
    for res in resources:
        for spec in _pod_specs(res.obj):
            for container in spec.get("containers", []) + spec.get("initContainers", []):
                name, tag, digest = split_image(container["image"])
                if name != entry["name"]:
                    continue
                name = entry.get("newName", name)
                if "digest" in entry:
                    container["image"] = f"{name}@{entry['digest']}"
                elif "newTag" in entry:
                    container["image"] = f"{name}:{entry['newTag']}"
                else:
                    container["image"] = name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


def _rename_references(obj: dict[str, Any], renames: dict[tuple[str, str | None, str], str]) -> None:
    namespace = obj.get("metadata", {}).get("namespace")

    def rename(ref: dict[str, Any] | None, kind: str, key: str = "name") -> None:
        if ref and (kind, namespace, ref.get(key)) in renames:
            ref[key] = renames[(kind, namespace, ref[key])]

    for spec in _pod_specs(obj):
        for volume in spec.get("volumes", []):
            rename(volume.get("configMap"), "ConfigMap")
            rename(volume.get("secret"), "Secret", "secretName")
            for source in volume.get("projected", {}).get("sources", []):
                rename(source.get("configMap"), "ConfigMap")
                rename(source.get("secret"), "Secret")
        for container in spec.get("containers", []) + spec.get("initContainers", []):
            for env_from in container.get("envFrom", []):
                rename(env_from.get("configMapRef"), "ConfigMap")
                rename(env_from.get("secretRef"), "Secret")
            for env in container.get("env", []):
                value_from = env.get("valueFrom", {})
                rename(value_from.get("configMapKeyRef"), "ConfigMap")
                rename(value_from.get("secretKeyRef"), "Secret")
