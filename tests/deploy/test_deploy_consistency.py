"""The manifests agree with the code: commands, settings, ports, probes, images, policies, dashboards.

Each check reads what the code reads or serves (``bot_sdk.cli.build_parser()``, ``referee.settings``,
the referee's health service name, the dashboard's routes, Celery's node names, the Grafana files)
and compares it with every rendered kustomization: the base, the dev and the production overlay.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
import socket
import tomllib
from typing import Any
from urllib.parse import urlsplit

import deploykit as dk
import pytest
from kustomize_lite import split_image

from bot_sdk.cli import build_parser
from referee import settings as settings_module
from workers import metrics as worker_metrics
from workers.queue import app as queue_app
from workers.queue import routing

RENDERS = ("base", "dev", "production")
SETTINGS = {f"SIXNIMMT_{f.name.upper()}" for f in dataclasses.fields(settings_module.Settings)}
SANDBOX_CAPS = {"SYS_ADMIN", "NET_ADMIN", "SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "KILL"}
"""What the sandbox needs as root (docs/sandbox.md); the worker adds exactly these."""
EXPECTED_COMMAND = {
    "referee": ("referee.server.cli", "_serve"),
    "worker": ("workers.cli", "cmd_worker"),
    "dashboard": ("dashboard.cli", "cmd_dashboard"),
    "api": ("api.cli", "cmd_serve"),
    "migrate": ("workers.cli", "cmd_migrate"),
}


def _parse(args: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(args)


def _command_of(func: Any) -> tuple[str, str]:
    """The command function behind ``args.func``, through workers.cli's error guard."""
    code = func.__code__
    if "command" in code.co_freevars:
        func = func.__closure__[code.co_freevars.index("command")].cell_contents
    return func.__module__, func.__name__


def _settings(
    name: str, component: str
) -> tuple[argparse.Namespace, settings_module.Settings, dict[str, Any]]:
    objs = dk.render(name)
    workload = dk.workloads(objs)[component]
    env = dk.container_env(workload.container, objs)
    return _parse(workload.container["args"]), settings_module.load(dk.settings_environ(env)), env


@pytest.fixture(params=RENDERS)
def render(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- commands, settings and the image -------------------------------------------------------------


def test_every_role_is_there(render: str) -> None:
    assert set(dk.workloads(dk.render(render))) == set(dk.COMPONENTS)


@pytest.mark.parametrize("component", dk.COMPONENTS)
def test_each_role_runs_its_command_through_the_image_entrypoint(render: str, component: str) -> None:
    container = dk.workloads(dk.render(render))[component].container
    assert "command" not in container, "the image's ENTRYPOINT is `sixnimmt`; roles differ by args only"
    args = _parse(container["args"])
    assert _command_of(args.func) == EXPECTED_COMMAND[component]


@pytest.mark.parametrize("component", dk.COMPONENTS)
def test_every_environment_variable_is_a_setting_and_parses(render: str, component: str) -> None:
    objs = dk.render(render)
    env = dk.container_env(dk.workloads(objs)[component].container, objs)
    for variable in env:
        if variable.startswith("SIXNIMMT"):
            assert variable in SETTINGS, f"{variable} is not a field of referee.settings.Settings"
        else:
            assert variable in dk.NON_SETTINGS_ENV, f"{variable}: neither a setting nor a known variable"
    settings_module.load(dk.settings_environ(env))  # types and ranges: raises SettingsError


def test_the_shared_configmap_holds_only_settings(render: str) -> None:
    data = dk.find(dk.render(render), "ConfigMap", "sixnimmt-config")["data"]
    assert set(data) - dk.NON_SETTINGS_ENV <= SETTINGS
    assert len(set(data) & SETTINGS) >= 10


def _is_set(value: Any) -> bool:
    return isinstance(value, dk.External) or bool(value)


def test_the_referee_listens_on_every_interface_with_an_admin_token(render: str) -> None:
    args, settings, env = _settings(render, "referee")
    host, _, port = (args.listen or settings.referee_listen).rpartition(":")
    assert host in ("0.0.0.0", "[::]"), "the default 127.0.0.1 is unreachable for probes and bots"
    assert int(port) > 0
    assert _is_set(env.get("SIXNIMMT_ADMIN_TOKEN")), "else admin calls need a token only its log shows"


@pytest.mark.parametrize("component", ["worker", "dashboard", "api", "migrate"])
def test_store_users_get_a_postgresql_url(render: str, component: str) -> None:
    _, settings, env = _settings(render, component)
    value = env.get("SIXNIMMT_DATABASE_URL")
    assert _is_set(value), "without it they would use a SQLite file in the container"
    if isinstance(value, str):
        assert urlsplit(settings.database_url).scheme in ("postgresql", "postgres")


def test_the_worker_gets_a_redis_broker(render: str) -> None:
    _, settings, env = _settings(render, "worker")
    value = env.get("SIXNIMMT_BROKER_URL")
    assert _is_set(value), "without a broker `sixnimmt worker` stops (exit status 2)"
    if isinstance(value, str):
        assert urlsplit(settings.broker_url).scheme in ("redis", "rediss")


def test_secrets_are_referenced_per_key_and_documented(render: str) -> None:
    objs = dk.render(render)
    referenced: set[str] = set()
    for workload in dk.workloads(objs).values():
        container = workload.container
        assert not any("secretRef" in s for s in container.get("envFrom", [])), "secrets per key, per role"
        for item in container.get("env", []):
            ref = item.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert re.fullmatch(rf"{dk.SECRET}(-[a-z0-9]{{10}})?", ref["name"])
                referenced.add(ref["key"])
    assert referenced == {
        "database-url", "dashboard-database-url", "broker-url", "admin-token", "dashboard-operator-token",
        "api-session-secret",
    }  # fmt: skip
    secrets = [o for o in objs if o["kind"] == "Secret" and o["metadata"]["name"].startswith(dk.SECRET)]
    if render == "dev":
        (secret,) = secrets
        assert set(secret["data"]) == referenced
    else:
        assert not secrets, "production's Secret is made outside Git"
    docs = (dk.REPO / "docs" / "deploy.md").read_text()
    create = re.search(r"kubectl (?:-n \S+ )?create secret generic sixnimmt-secrets[^`]*", docs)
    assert create, "docs/deploy.md shows how to create the Secret"
    for key in referenced:
        assert f"--from-literal={key}=" in create.group(0), f"docs/deploy.md: the Secret's {key}"


def test_every_container_runs_the_project_image(render: str) -> None:
    version = tomllib.loads((dk.REPO / "pyproject.toml").read_text())["project"]["version"]
    expected = {
        "base": f"{dk.IMAGE}:{version}",
        "dev": f"{dk.IMAGE}:dev",
        "production": f"registry.example.com/{dk.IMAGE}:{version}",
    }[render]
    for workload in dk.workloads(dk.render(render)).values():
        for container in workload.spec["containers"] + workload.spec.get("initContainers", []):
            assert container["image"] == expected
            assert split_image(container["image"])[0].rpartition("/")[2] == dk.IMAGE


# -- ports and probes -----------------------------------------------------------------------------


def _annotated_port(workload: dk.Workload) -> int:
    annotations = workload.pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    return int(annotations["prometheus.io/port"])


def test_referee_ports_and_grpc_health_probes(render: str) -> None:
    from referee.server.app import SERVICE_NAME

    args, settings, _ = _settings(render, "referee")
    workload = dk.workloads(dk.render(render))["referee"]
    container = workload.container
    port = int((args.listen or settings.referee_listen).rpartition(":")[2])
    assert dk.container_port(container, "grpc") == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"] == {"port": port, "service": SERVICE_NAME}
    metrics = args.metrics_port if args.metrics_port is not None else settings.referee_metrics_port
    assert metrics > 0
    assert dk.container_port(container, "metrics") == metrics == _annotated_port(workload)


def test_worker_metrics_port(render: str) -> None:
    args, settings, _ = _settings(render, "worker")
    workload = dk.workloads(dk.render(render))["worker"]
    metrics = args.metrics_port if args.metrics_port is not None else settings.worker_metrics_port
    assert metrics > 0
    assert dk.container_port(workload.container, "metrics") == metrics == _annotated_port(workload)
    assert args.concurrency > 0, "Celery's default is the node's cores, not the container's CPU limit"


def test_worker_probes_ping_this_pods_celery_node(render: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import celery
    from celery.utils.nodenames import default_nodename, host_format

    container = dk.workloads(dk.render(render))["worker"].container
    for probe in ("readinessProbe", "livenessProbe"):
        shell, flag, line = container[probe]["exec"]["command"]
        assert (shell, flag) == ("sh", "-c"), "a shell expands $HOSTNAME (the pod's name)"
        argv = shlex.split(line)
        assert argv[:5] == ["celery", "-A", "workers.queue.app", "inspect", "ping"]
        assert argv[argv.index("-d") + 1] == "celery@$HOSTNAME"
        assert float(argv[argv.index("--timeout") + 1]) < container[probe]["timeoutSeconds"]
    from workers.queue import app as app_module

    assert isinstance(app_module.app, celery.Celery)
    # The pod's worker is named celery@%h: Celery's expansion of it is celery@<hostname> (in a pod:
    # its name), what the probes ping; without --hostname, `sixnimmt worker` would be sixnimmt-PID@.
    assert host_format(default_nodename("celery@%h")) == f"celery@{socket.gethostname()}"
    started: list[list[str]] = []
    monkeypatch.setattr(app_module.app, "worker_main", started.append)
    monkeypatch.setenv("SIXNIMMT_WORKER_METRICS_PORT", "0")
    monkeypatch.setenv("SIXNIMMT_BROKER_URL", "redis://redis.invalid:6379/0")  # the Secret's broker-url
    args = _parse(container["args"])
    args.func(args)
    (argv,) = started
    assert [a for a in argv if a.startswith(("-n", "--hostname"))] == ["--hostname=celery@%h"], argv


def test_dashboard_port_and_http_probes(render: str) -> None:
    from dashboard.app import create_app
    from workers.store.engine import make_engine

    args, _, _ = _settings(render, "dashboard")
    workload = dk.workloads(dk.render(render))["dashboard"]
    container = workload.container
    assert args.host == "0.0.0.0"
    assert dk.container_port(container, "http") == args.port == _annotated_port(workload)
    engine = make_engine("sqlite://")
    routes = {getattr(r, "path", None) for r in create_app(engine).routes}
    engine.dispose()
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] in routes
        assert dk.container_port(container, get["port"]) == args.port
    assert "/metrics" in routes


def test_services_select_their_pods_and_name_real_ports(render: str) -> None:
    objs = dk.render(render)
    pods = [o["spec"]["template"] for o in objs if o["kind"] in ("Deployment", "StatefulSet")]
    for service in dk.by_kind(objs, "Service").values():
        selected = [
            p
            for p in pods
            if dk.selects({"matchLabels": service["spec"]["selector"]}, p["metadata"]["labels"])
        ]
        assert len(selected) == 1, (
            f"Service {service['metadata']['name']} selects {len(selected)} pod templates"
        )
        (container,) = selected[0]["spec"]["containers"]
        for port in service["spec"]["ports"]:
            assert dk.container_port(container, port["targetPort"]) == port["port"]


# -- scaling and disruption -----------------------------------------------------------------------


def test_the_worker_autoscaler(render: str) -> None:
    objs = dk.render(render)
    (hpa,) = dk.by_kind(objs, "HorizontalPodAutoscaler").values()
    target = hpa["spec"]["scaleTargetRef"]
    deployment = dk.by_kind(objs, "Deployment")[target["name"]]
    assert target["kind"] == "Deployment" and deployment is dk.workloads(objs)["worker"].owner
    assert "replicas" not in deployment["spec"], "the autoscaler owns the count; apply would reset it"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    metrics = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert metrics["Resource"]["resource"]["name"] == "cpu"
    assert "cpu" in dk.workloads(objs)["worker"].container["resources"]["requests"], (
        "utilization needs a request"
    )
    if render == "dev":  # no prometheus-adapter there: CPU alone
        assert set(metrics) == {"Resource"}
        return
    # The queue's length, as the workers' gauge names it (docs/capacity.md).
    assert set(metrics) == {"External", "Resource"}
    external = metrics["External"]["external"]
    assert external["metric"]["name"] == worker_metrics.QUEUE_MESSAGES
    assert external["metric"]["selector"]["matchLabels"] == {"queue": routing.SHARED}
    assert queue_app.app.conf.task_default_queue == routing.SHARED
    assert external["target"]["type"] == "AverageValue" and float(external["target"]["averageValue"]) > 0


def test_the_adapter_serves_the_metric_the_autoscaler_reads() -> None:
    """deploy/prometheus/adapter.yaml (prometheus-adapter's rules) serves the workers' queue gauge
    under the name the HorizontalPodAutoscaler asks for, as the max over workers (each reports the
    same queue: a sum would count the backlog once per worker)."""
    import yaml

    adapter = yaml.safe_load((dk.REPO / "deploy" / "prometheus" / "adapter.yaml").read_text())
    (rule,) = adapter["rules"]["external"]
    assert rule["seriesQuery"].startswith(worker_metrics.QUEUE_MESSAGES + "{")
    assert re.fullmatch(rule["name"]["matches"], worker_metrics.QUEUE_MESSAGES)
    assert rule["name"]["as"] == worker_metrics.QUEUE_MESSAGES
    assert rule["metricsQuery"].replace(" ", "").startswith("maxby(queue)(")
    (hpa,) = dk.by_kind(dk.render("base"), "HorizontalPodAutoscaler").values()
    (external,) = [m["external"] for m in hpa["spec"]["metrics"] if m["type"] == "External"]
    assert external["metric"]["name"] == rule["name"]["as"]


def test_the_workers_connection_budget(render: str) -> None:
    """Each worker process holds at most SIXNIMMT_DB_POOL_SIZE + SIXNIMMT_DB_MAX_OVERFLOW store
    connections; a block's task and its lease renewal (a thread) need two at once. The budget
    docs/capacity.md counts: (--concurrency + the main process) x that, per pod."""
    args, settings, env = _settings(render, "worker")
    assert "SIXNIMMT_DB_POOL_SIZE" in env and "SIXNIMMT_DB_MAX_OVERFLOW" in env
    per_process = settings.db_pool_size + settings.db_max_overflow
    assert per_process >= 2, "the lease renewal would wait for the block's own connection"
    assert (args.concurrency + 1) * per_process <= 9, "more than the 9 a pod docs/capacity.md counts"


def test_disruption_budgets(render: str) -> None:
    objs = dk.render(render)
    work = dk.workloads(objs)
    scaled = {"worker"} | {
        c
        for c, w in work.items()
        if w.owner["kind"] == "Deployment" and w.owner["spec"].get("replicas", 1) > 1
    }
    covered = set()
    for pdb in dk.by_kind(objs, "PodDisruptionBudget").values():
        spec = pdb["spec"]
        assert ("minAvailable" in spec) != ("maxUnavailable" in spec)
        (component,) = [c for c, w in work.items() if dk.selects(spec["selector"], w.labels)]
        covered.add(component)
        replicas = work[component].owner["spec"].get("replicas")
        if replicas is not None and "minAvailable" in spec:
            assert spec["minAvailable"] < replicas, f"{component}: the budget would block every drain"
    assert scaled <= covered
    assert "referee" not in covered, "one replica: a budget would block every node drain"


# -- security -------------------------------------------------------------------------------------


@pytest.mark.parametrize("component", dk.COMPONENTS)
def test_security_context(render: str, component: str) -> None:
    workload = dk.workloads(dk.render(render))[component]
    spec, container = workload.spec, workload.container
    pod_sc, sc = spec["securityContext"], container["securityContext"]
    assert spec["automountServiceAccountToken"] is False
    assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]], "a writable /tmp on a read-only root"
    if component == "worker":
        assert pod_sc["runAsUser"] == sc["runAsUser"] == 0 and pod_sc["runAsNonRoot"] is False
        assert set(sc["capabilities"]["add"]) == SANDBOX_CAPS
        assert sc["allowPrivilegeEscalation"] is True  # implied by SYS_ADMIN; see worker.yaml
        assert sc["appArmorProfile"] == {"type": "Unconfined"}
    else:
        _, stages = dk.dockerfile()
        image_uid = int(stages[-1].all("USER")[-1].value.split(":")[0])
        assert pod_sc["runAsNonRoot"] is True and sc["runAsNonRoot"] is True
        assert pod_sc["runAsUser"] == pod_sc["runAsGroup"] == dk.APP_UID == image_uid
        assert "runAsUser" not in sc
        assert sc["allowPrivilegeEscalation"] is False
        assert "add" not in sc["capabilities"]
        assert "appArmorProfile" not in sc


@pytest.mark.parametrize("component", dk.COMPONENTS)
def test_resources_and_probes(render: str, component: str) -> None:
    workload = dk.workloads(dk.render(render))[component]
    resources = workload.container["resources"]
    for kind in ("requests", "limits"):
        assert set(resources[kind]) == {"cpu", "memory"}
    long_running = workload.owner["kind"] == "Deployment"
    for probe in ("readinessProbe", "livenessProbe"):
        assert (probe in workload.container) == long_running


# -- network policies -----------------------------------------------------------------------------


def _policies_for(objs: tuple[dict[str, Any], ...], labels: dict[str, str]) -> list[dict[str, Any]]:
    return [
        p for p in dk.by_kind(objs, "NetworkPolicy").values() if dk.selects(p["spec"]["podSelector"], labels)
    ]


def _ports(rules: list[dict[str, Any]], container: dict[str, Any]) -> set[int]:
    return {dk.container_port(container, p["port"]) for rule in rules for p in rule.get("ports", [])}


def test_network_policies(render: str) -> None:
    objs = dk.render(render)
    work = dk.workloads(objs)
    deny = dk.by_kind(objs, "NetworkPolicy")["sixnimmt-default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    for component, workload in work.items():
        own = [p for p in _policies_for(objs, workload.labels) if p["spec"]["podSelector"]]
        assert len(own) == 1, f"{component}: one policy of its own"
        assert own[0]["spec"]["policyTypes"] == ["Ingress", "Egress"]
    referee = next(p for p in _policies_for(objs, work["referee"].labels) if p["spec"]["podSelector"])["spec"]
    container = work["referee"].container
    open_rules = [r for r in referee["ingress"] if "from" not in r]
    assert _ports(open_rules, container) == {dk.container_port(container, "grpc")}, "remote bots: gRPC only"
    guarded = [r for r in referee["ingress"] if "from" in r]
    assert _ports(guarded, container) == {dk.container_port(container, "metrics")}
    assert referee["egress"] == []
    worker = next(p for p in _policies_for(objs, work["worker"].labels) if p["spec"]["podSelector"])["spec"]
    container = work["worker"].container
    assert all("namespaceSelector" in f for r in worker["ingress"] for f in r["from"])
    assert _ports(worker["ingress"], container) == {dk.container_port(container, "metrics")}
    egress = _ports(worker["egress"], container)
    assert egress == {53, 5432, 6379}
    for component, ingress in (("dashboard", {"http"}), ("migrate", set())):
        policy = next(p for p in _policies_for(objs, work[component].labels) if p["spec"]["podSelector"])
        own = work[component].container
        assert _ports(policy["spec"]["ingress"], own) == {dk.container_port(own, name) for name in ingress}
        assert _ports(policy["spec"]["egress"], own) == {53, 5432}, f"{component}: DNS and the store only"
    if render == "dev":
        secret = dk.find(objs, "Secret", dk.SECRET)
        env = dk.container_env(container, objs)
        for variable in ("SIXNIMMT_DATABASE_URL", "SIXNIMMT_BROKER_URL"):
            assert urlsplit(str(env[variable])).port in egress, f"{variable} of {secret['metadata']['name']}"
        for service in ("postgres", "redis"):
            policy = dk.by_kind(objs, "NetworkPolicy")[service]["spec"]
            (rule,) = policy["ingress"]
            (peer,) = rule["from"]
            assert dk.selects(peer["podSelector"], work["worker"].labels)


# -- monitoring -----------------------------------------------------------------------------------


def _grafana_files() -> dict[str, str]:
    return {
        p.name: p.read_text() for p in sorted((dk.REPO / "deploy" / "grafana" / "dashboards").glob("*.json"))
    }


def test_the_dashboards_configmap_equals_deploy_grafana(render: str) -> None:
    configmap = dk.by_kind(dk.render(render), "ConfigMap")["sixnimmt-grafana-dashboards"]
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["data"] == _grafana_files()


def test_the_copies_of_the_grafana_dashboards_are_current() -> None:
    copies = {p.name: p.read_text() for p in sorted((dk.K8S / "base" / "grafana").glob("*.json"))}
    assert copies == _grafana_files(), "cp deploy/grafana/dashboards/*.json deploy/k8s/base/grafana/"


def _dashboard_jobs() -> set[str]:
    jobs: set[str] = set()
    for text in _grafana_files().values():
        jobs |= set(re.findall(r'job=\\"([^"\\]+)\\"', json.dumps(json.loads(text))))
    return jobs


def test_the_servicemonitor_scrapes_every_metrics_port_under_the_dashboards_job_names() -> None:
    objs = dk.render("production")
    (monitor,) = [o for o in objs if o["kind"] == "ServiceMonitor"]
    spec = monitor["spec"]
    services = [
        s
        for s in dk.by_kind(objs, "Service").values()
        if dk.selects(spec["selector"], s["metadata"]["labels"])
    ]
    assert {s["metadata"]["name"] for s in services} == {
        "sixnimmt-referee",
        "sixnimmt-worker",
        "sixnimmt-dashboard",
        "sixnimmt-api",
    }
    endpoint_ports = {e["port"] for e in spec["endpoints"]}
    assert all(e["path"] == "/metrics" for e in spec["endpoints"])
    for service in services:
        names = {p["name"] for p in service["spec"]["ports"]}
        assert names & endpoint_ports, f"no endpoint scrapes {service['metadata']['name']}"
    jobs = {s["metadata"]["labels"][spec["jobLabel"]] for s in services}
    assert _dashboard_jobs() and _dashboard_jobs() <= jobs
    # The same label on the pods, for annotation-based scraping to relabel the job (docs/deploy.md).
    for workload in dk.workloads(objs).values():
        if workload.owner["kind"] == "Deployment":
            assert workload.labels[spec["jobLabel"]] == f"sixnimmt-{workload.component}"


def test_the_documented_degraded_worker_patch_is_valid_and_unprivileged() -> None:
    """docs/deploy.md's patch for running the worker without root: it applies and drops everything."""
    import copy

    import kubernetes_validate
    import yaml
    from kustomize_lite import _merge

    docs = (dk.REPO / "docs" / "deploy.md").read_text()
    block = docs[docs.index("**The degraded alternative**") :].split("```yaml\n", 1)[1].split("```", 1)[0]
    patch = yaml.safe_load(block)
    worker = copy.deepcopy(dk.workloads(dk.render("dev"))["worker"].owner)
    assert (patch["kind"], patch["metadata"]["name"]) == ("Deployment", worker["metadata"]["name"])
    _merge(worker, {"spec": patch["spec"]}, "docs/deploy.md")
    kubernetes_validate.validate(worker, dk.KUBERNETES_VERSIONS[0], strict=True)
    pod = worker["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert pod["securityContext"]["runAsUser"] == sc["runAsUser"] == dk.APP_UID
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
    assert "appArmorProfile" not in sc and sc["readOnlyRootFilesystem"] is True
