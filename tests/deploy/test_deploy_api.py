"""The API's manifests agree with its code, and the API started as its container starts answers them.

The Ingress routes /v1 and /account (routes the app has) to the API's Service and nothing else of
it; the probes' paths are the app's; the settings the container gets choose validations on the
workers and rate limits in the broker's Redis; its network policy opens the HTTP port and reaches
only DNS, the store and the broker; ``sixnimmt api serve`` run with the container's args answers
the probes and ``/metrics`` over a real socket, and stops on SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import deploykit as dk
import pytest
from testkit import wait_for

from api.app import create_app
from api.limits import RedisBuckets, make_buckets
from api.validation import QueuedValidator, make_validator
from bot_sdk.cli import build_parser
from referee import settings as settings_module
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

SIXNIMMT = Path(sys.executable).with_name("sixnimmt")
RENDERS = ("base", "dev", "production")


def _routes() -> set[str]:
    engine = make_engine("sqlite://")
    upgrade(engine)
    app = create_app(engine, settings_module.load({}), sandbox=False)
    app.state.validator.close()
    engine.dispose()
    return {str(getattr(r, "path", "")) for r in app.routes}


@pytest.mark.parametrize("render", RENDERS)
def test_the_ingress_publishes_v1_and_account_on_the_apis_service(render: str) -> None:
    objs = dk.render(render)
    (ingress,) = dk.by_kind(objs, "Ingress").values()
    service = dk.by_kind(objs, "Service")["sixnimmt-api"]
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    paths = {}
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] == "sixnimmt-api" and backend["port"]["name"] in service_ports
            paths[path["path"]] = path["pathType"]
    assert paths == {"/v1": "Prefix", "/account": "Prefix"}
    routes = _routes()
    for prefix in paths:
        assert any(r == prefix or r.startswith(prefix + "/") for r in routes), f"no route under {prefix}"
    assert "/metrics" in routes and not any("/metrics".startswith(p) for p in paths), "metrics stay inside"


@pytest.mark.parametrize("render", RENDERS)
def test_the_apis_probes_port_and_settings(render: str) -> None:
    objs = dk.render(render)
    workload = dk.workloads(objs)["api"]
    container = workload.container
    args = build_parser().parse_args(container["args"])
    assert args.host == "0.0.0.0"
    annotations = workload.pod["metadata"]["annotations"]
    assert dk.container_port(container, "http") == args.port == int(annotations["prometheus.io/port"])
    routes = _routes()
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == "/healthz" and get["path"] in routes
        assert dk.container_port(container, get["port"]) == args.port
    env = dk.container_env(container, objs)
    assert isinstance(env["SIXNIMMT_BROKER_URL"], dk.External) or env["SIXNIMMT_BROKER_URL"]
    # With the broker the Secret gives: validations on the workers, limits in the broker's Redis.
    environ = dk.settings_environ(env) | {"SIXNIMMT_BROKER_URL": "redis://redis.invalid:6379/0"}
    settings = settings_module.load(environ)
    engine = make_engine("sqlite://")
    validator = make_validator(engine, settings)
    assert isinstance(validator, QueuedValidator)
    validator.close()
    engine.dispose()
    assert isinstance(make_buckets(settings, "key", 1, 1), RedisBuckets)


@pytest.mark.parametrize("render", RENDERS)
def test_the_apis_network_policy(render: str) -> None:
    objs = dk.render(render)
    workload = dk.workloads(objs)["api"]
    (policy,) = [
        p
        for p in dk.by_kind(objs, "NetworkPolicy").values()
        if p["spec"]["podSelector"] and dk.selects(p["spec"]["podSelector"], workload.labels)
    ]
    container = workload.container

    def ports(rules: list[dict[str, Any]]) -> set[int]:
        return {dk.container_port(container, p["port"]) for r in rules for p in r.get("ports", [])}

    assert ports(policy["spec"]["ingress"]) == {dk.container_port(container, "http")}
    assert ports(policy["spec"]["egress"]) == {53, 5432, 6379}
    if render == "dev":  # the in-cluster Redis lets the API in
        (rule,) = dk.by_kind(objs, "NetworkPolicy")["redis"]["spec"]["ingress"]
        assert any(dk.selects(peer["podSelector"], workload.labels) for peer in rule["from"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_api_started_as_its_container_answers_its_probes_and_metrics(tmp_path: Path) -> None:
    objs = dk.render("dev")
    container = dk.workloads(objs)["api"].container
    env = dk.settings_environ(dk.container_env(container, objs))
    env |= {"SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}
    env.pop("SIXNIMMT_BROKER_URL", None)  # no broker here: the validations would run in the process
    port = _free_port()
    args = list(container["args"])
    args[args.index("--host") + 1], args[args.index("--port") + 1] = "127.0.0.1", str(port)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    log = (tmp_path / "api.log").open("wb")
    process = subprocess.Popen(
        [str(SIXNIMMT), *args], env={**clean, **env}, stdout=log, stderr=log, start_new_session=True
    )
    try:

        def get(path: str) -> tuple[int, str] | None:
            if process.poll() is not None:
                raise AssertionError((tmp_path / "api.log").read_text())
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
                    return answer.status, answer.read().decode()
            except (urllib.error.URLError, OSError):
                return None

        for probe in ("readinessProbe", "livenessProbe"):
            status, _ = wait_for(lambda p=probe: get(container[p]["httpGet"]["path"]), 120, probe)
            assert status == 200
        status, metrics = wait_for(lambda: get("/metrics"), 30, "/metrics")
        assert status == 200 and "sixnimmt_api_pending_validations 0.0" in metrics
        assert 'sixnimmt_api_requests_total{method="GET",route="/healthz",status="200"}' in metrics
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            code = process.wait()
        log.close()
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again for its caller.
    assert code in (0, -signal.SIGTERM), (tmp_path / "api.log").read_text()
    assert "Application shutdown complete" in (tmp_path / "api.log").read_text()
