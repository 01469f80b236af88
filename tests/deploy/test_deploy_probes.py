"""The probes in the manifests, run against the real processes the containers start.

Each service starts with its container's args and environment as the dev overlay renders them (only
addresses moved to free ports on 127.0.0.1, the store to a temporary SQLite file, the broker to a
private redis-server), and is probed the way the kubelet would: the gRPC health check with the
probe's service name, the dashboard's HTTP paths, and the worker's exec command in a shell with
``HOSTNAME`` set as in a pod.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import deploykit as dk
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

SIXNIMMT = Path(sys.executable).with_name("sixnimmt")
T = TypeVar("T")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _container(component: str) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    objs = dk.render("dev")
    container = dk.workloads(objs)[component].container
    env = dk.settings_environ(dk.container_env(container, objs))
    return list(container["args"]), env, container


def _stop(process: subprocess.Popen[bytes], grace: float = 20.0) -> int:
    """SIGTERM, as the kubelet does; SIGKILL to the process group after ``grace``."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def _wait(condition: Callable[[], T], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def test_the_referee_answers_its_grpc_probes_and_serves_metrics(tmp_path: Path) -> None:
    args, env, container = _container("referee")
    port, metrics = _free_port(), _free_port()
    env |= {"SIXNIMMT_REFEREE_LISTEN": f"127.0.0.1:{port}", "SIXNIMMT_REFEREE_METRICS_PORT": str(metrics)}
    log = (tmp_path / "referee.log").open("wb")
    process = subprocess.Popen(
        [str(SIXNIMMT), *args], env={**os.environ, **env}, stdout=log, stderr=log, start_new_session=True
    )
    try:
        probe = container["readinessProbe"]["grpc"]

        def check() -> int | None:
            if process.poll() is not None:
                raise AssertionError((tmp_path / "referee.log").read_text())
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                try:
                    reply = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=probe["service"]), timeout=2
                    )
                except grpc.RpcError:
                    return None
            return int(reply.status)

        assert _wait(check, 30, "the referee's health service") == health_pb2.HealthCheckResponse.SERVING
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as response:
            assert "sixnimmt_referee_matches_running" in response.read().decode()
    finally:
        code = _stop(process)
        log.close()
    assert code == 0, (tmp_path / "referee.log").read_text()


def test_the_dashboard_answers_its_http_probes(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from dashboard.app import create_app
    from workers.store.engine import make_engine
    from workers.store.migrate import upgrade

    _, _, container = _container("dashboard")
    ready, alive = (container[p]["httpGet"]["path"] for p in ("readinessProbe", "livenessProbe"))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    writer = make_engine(url)
    upgrade(writer)
    writer.dispose()
    engine = make_engine(url, read_only=True)
    with TestClient(create_app(engine)) as client:
        assert client.get(ready).status_code == 200
        assert client.get(alive).status_code == 200
    engine.dispose()
    # The store down: not ready (no traffic), still alive (no restart loop while the database is out).
    down = make_engine(f"postgresql://nobody@127.0.0.1:{_free_port()}/none", read_only=True)
    with TestClient(create_app(down)) as client:
        assert client.get(ready).status_code == 503
        assert client.get(alive).status_code == 200
    down.dispose()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A private redis-server on a free port of 127.0.0.1, for this test alone."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server here: the worker's Celery ping probe is checked against a real one")
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip

    def up() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    try:
        _wait(up, 15, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()


def test_the_worker_answers_its_celery_ping_probe(tmp_path: Path, redis_url: str) -> None:
    args, env, container = _container("worker")
    metrics = _free_port()
    env |= {
        "SIXNIMMT_BROKER_URL": redis_url,
        "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
        "SIXNIMMT_WORKER_METRICS_PORT": str(metrics),
    }
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [str(SIXNIMMT), *args], env={**os.environ, **env}, stdout=log, stderr=log, start_new_session=True
    )
    shell = container["livenessProbe"]["exec"]["command"]
    assert container["readinessProbe"]["exec"]["command"] == shell
    # What the kubelet runs: the container's environment, HOSTNAME being the pod's (= node) name.
    probe_env = {**os.environ, **env, "HOSTNAME": socket.gethostname()}
    probe_env["PATH"] = f"{SIXNIMMT.parent}:{probe_env.get('PATH', '')}"
    try:

        def ready() -> bool:
            if process.poll() is not None:
                raise AssertionError((tmp_path / "worker.log").read_text())
            return b" ready." in (tmp_path / "worker.log").read_bytes()

        _wait(ready, 60, "the worker to start")  # probing earlier would wait out the ping's timeout
        answer = subprocess.run(shell, env=probe_env, capture_output=True, timeout=60)
        assert answer.returncode == 0, answer.stdout.decode() + answer.stderr.decode()
        assert b"pong" in answer.stdout
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as response:
            assert "sixnimmt_worker_broker_up 1.0" in response.read().decode()
        # Another pod's name gets no answer: the probe fails (a short timeout, to keep this fast).
        other = [*shell[:2], shell[2].replace("--timeout 10", "--timeout 1")]
        assert other[2] != shell[2]
        failed = subprocess.run(
            other, env={**probe_env, "HOSTNAME": "no-such-pod"}, capture_output=True, timeout=60
        )
        assert failed.returncode != 0
    finally:
        _stop(process)
        log.close()
