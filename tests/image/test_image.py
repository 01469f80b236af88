"""The built image, run as the production overlay runs it: every role starts, answers its probes,
and a league is played through the worker in the image.

The roles' commands, environment, users and capabilities are read from the rendered production
overlay (``imagekit``), so a change to either the manifests or the image that breaks the other
fails here. The store is a database of its own on the machine's PostgreSQL, the broker one of the
machine's Redis databases; the Secret's values are those. The tests run in file order and share
one set of running roles; the last one stops them and checks that each exits cleanly.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import imagekit as ik
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from testkit import borrowed_redis

HERE = Path(__file__).resolve().parent
OVERLAY = "production"
PG = ("127.0.0.1", 5432)
OVERRIDES = {"PGSSLMODE": "disable"}
"""The one setting changed from the overlay: the machine's PostgreSQL has no TLS (production's is
``require``). docs/deploy.md lists it with what else differs from a cluster."""
LEAGUE_BOTS = ("confined", "random", "lowest", "heuristic")
STOP_GRACE_S = 60.0


@dataclass
class Deployment:
    """The running roles and what the test gave them."""

    image: str
    roles: dict[str, ik.Role]
    secrets: dict[str, str]
    logs: Path
    containers: dict[str, ik.Container] = field(default_factory=dict)
    running: dict[str, ik.Running] = field(default_factory=dict)
    ports: dict[str, dict[int, int]] = field(default_factory=dict)
    """Per role: container port → host port."""
    config: dict[str, Any] = field(default_factory=dict)

    def spec(self, component: str, argv: list[str] | None = None, *, tmpfs: bool = True) -> ik.Spec:
        """How the pod spec starts ``component`` (or ``argv`` in its container, as kubectl exec)."""
        role = self.roles[component]
        env = ik.resolve_env(role.env, self.secrets, OVERRIDES)
        ports = self.ports.setdefault(component, {p: ik.free_port() for p in role.ports().values()})
        env, args = ik.publish(env, role.args, ports)
        return ik.Spec(
            argv=[*self.config["Entrypoint"], *args] if argv is None else argv,
            env=env,
            user=role.user(self.config.get("User", "")),
            capabilities=role.capabilities(),
            hostname=f"sixnimmt-{component}-image-test",
            tmpfs=tmpfs,
        )

    def container(self, component: str) -> ik.Container:
        if component not in self.containers:
            name = f"sixnimmt-image-test-{component}-{os.getpid()}"
            self.containers[component] = ik.Container(self.image, name)
        return self.containers[component]

    def start(self, component: str) -> ik.Running:
        running = self.container(component).start(self.spec(component), self.logs / f"{component}.log")
        self.running[component] = running
        return running

    def log(self, component: str) -> str:
        path = self.logs / f"{component}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def exec(self, component: str, argv: list[str], timeout: float = 300) -> str:
        """``kubectl exec`` into the role's container: its user, env and capabilities."""
        done = self.container(component).run(self.spec(component, argv, tmpfs=False), timeout)
        assert done.returncode == 0, f"{argv} in {component}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def host_port(self, component: str, container_port: int | str) -> int:
        """Where a container port (a number or a port's name) is published on the host."""
        if isinstance(container_port, str):
            container_port = self.roles[component].ports()[container_port]
        return self.ports[component][container_port]


# -- the services the roles use ---------------------------------------------------------------


def _admin() -> Any:
    return psycopg.connect(host=PG[0], port=PG[1], user="postgres", dbname="postgres", autocommit=True)


@pytest.fixture(scope="module")
def store() -> Iterator[dict[str, str]]:
    """A database of its own and a read-only role for the dashboard, dropped afterwards."""
    name, reader = f"sixnimmt_image_{os.getpid()}", f"sixnimmt_image_reader_{os.getpid()}"
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f'DROP ROLE IF EXISTS "{reader}"')
        conn.execute(f'CREATE ROLE "{reader}" LOGIN')
    try:
        yield {
            "name": name,
            "reader": reader,
            "database-url": f"postgresql://postgres@{PG[0]}:{PG[1]}/{name}",
            "dashboard-database-url": f"postgresql://{reader}@{PG[0]}:{PG[1]}/{name}",
        }
    finally:
        with _admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'DROP ROLE IF EXISTS "{reader}"')


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    """One of the machine's Redis databases, reserved with the lock files the worker tests use."""
    with borrowed_redis() as url:
        yield url


@pytest.fixture(scope="module")
def deployment(image: str, store: dict[str, str], broker: str, tmp_path_factory: Any) -> Iterator[Deployment]:
    problem = ik.have_buildah()
    assert problem is None, problem
    deployment = Deployment(
        image=image,
        roles=ik.roles(OVERLAY),
        secrets={
            "database-url": store["database-url"],
            "dashboard-database-url": store["dashboard-database-url"],
            "broker-url": broker,
            "admin-token": secrets.token_hex(24),
            "dashboard-operator-token": secrets.token_hex(24),
        },
        logs=tmp_path_factory.mktemp("image-logs"),
        config=ik.image_config(image),
    )
    try:
        yield deployment
    finally:
        for running in deployment.running.values():
            running.kill()
        for container in deployment.containers.values():
            container.remove()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _metrics(port: int) -> str:
    status, body = _get(f"http://127.0.0.1:{port}/metrics")
    assert status == 200, body
    return body


def _check_identity(deployment: Deployment, component: str) -> None:
    """The role's process runs as the pod spec's user with exactly its capabilities."""
    running = deployment.running[component]
    uid, gid = running.spec.user
    status = running.status()
    assert status["Uid"].split() == [str(uid)] * 4, status["Uid"]
    assert status["Gid"].split() == [str(gid)] * 4, status["Gid"]
    assert running.capabilities() == running.spec.capabilities


# -- the tests, in order ------------------------------------------------------------------------


def test_the_image_is_the_one_the_manifests_expect(deployment: Deployment) -> None:
    config = deployment.config
    assert config["Entrypoint"] == ["sixnimmt"]
    assert config["User"] == "10001:10001"
    for component, role in deployment.roles.items():
        assert role.container["image"].rsplit("/", 1)[-1].split(":")[0] == "sixnimmt-arena", component
        # Non-root wherever the role allows: only a role that needs capabilities (the worker's
        # sandbox) runs as root.
        uid, _ = role.user(config["User"])
        assert (uid == 0) == bool(role.capabilities()), f"{component}: uid {uid}, {role.capabilities()}"


def test_the_migration_job_brings_the_store_to_its_schema(
    deployment: Deployment, store: dict[str, str]
) -> None:
    from alembic.script import ScriptDirectory

    from workers.store.migrate import alembic_config

    done = deployment.container("migrate").run(deployment.spec("migrate"), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with psycopg.connect(store["database-url"], autocommit=True) as conn:
        (revision,) = conn.execute("SELECT version_num FROM alembic_version").fetchone() or (None,)
        assert revision == ScriptDirectory.from_config(alembic_config()).get_current_head()
        # The dashboard's role only reads, as docs/deploy.md recommends once migrated.
        conn.execute(f'GRANT USAGE ON SCHEMA public TO "{store["reader"]}"')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{store["reader"]}"')


def test_the_referee_starts_and_answers_its_grpc_probe(deployment: Deployment) -> None:
    started = time.monotonic()
    running = deployment.start("referee")
    probe = deployment.roles["referee"].container["readinessProbe"]["grpc"]
    port = deployment.host_port("referee", probe["port"])

    def serving() -> int | None:
        if not running.alive():
            raise AssertionError(deployment.log("referee"))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=probe["service"]), timeout=2
                )
            except grpc.RpcError:
                return None
        return int(reply.status)

    assert ik.wait_for(serving, 60, "the referee's health") == health_pb2.HealthCheckResponse.SERVING
    print(f"referee ready in {time.monotonic() - started:.2f} s")
    # The builder compiled its hot path (referee.accel); the referee runs it, the sources unchanged.
    assert "its hot path compiled" in deployment.log("referee"), deployment.log("referee")
    _check_identity(deployment, "referee")
    port = deployment.host_port("referee", deployment.roles["referee"].metrics_port())
    assert "sixnimmt_referee_matches_running" in _metrics(port)


def test_the_dashboard_starts_ready_on_a_read_only_role(deployment: Deployment) -> None:
    running = deployment.start("dashboard")
    container = deployment.roles["dashboard"].container
    ready = container["readinessProbe"]["httpGet"]
    alive = container["livenessProbe"]["httpGet"]

    def answers() -> int | None:
        if not running.alive():
            raise AssertionError(deployment.log("dashboard"))
        port = deployment.host_port("dashboard", ready["port"])
        try:
            return _get(f"http://127.0.0.1:{port}{ready['path']}")[0]
        except OSError:
            return None

    assert ik.wait_for(answers, 60, "the dashboard's readiness path") == 200, deployment.log("dashboard")
    status, _ = _get(f"http://127.0.0.1:{deployment.host_port('dashboard', alive['port'])}{alive['path']}")
    assert status == 200
    _check_identity(deployment, "dashboard")
    port = deployment.host_port("dashboard", deployment.roles["dashboard"].metrics_port())
    assert "sixnimmt_dashboard" in _metrics(port)


def test_the_worker_starts_and_answers_its_exec_probe(deployment: Deployment) -> None:
    running = deployment.start("worker")
    port = deployment.host_port("worker", deployment.roles["worker"].metrics_port())

    def serving() -> str | None:
        if not running.alive():
            raise AssertionError(deployment.log("worker"))
        try:
            return _metrics(port)
        except OSError:
            return None

    assert "sixnimmt_worker" in ik.wait_for(serving, 60, "the worker's /metrics")
    _check_identity(deployment, "worker")
    command = deployment.roles["worker"].container["readinessProbe"]["exec"]["command"]
    ik.wait_for(lambda: _probe(deployment, command), 90, f"the worker's probe {command}", interval=1)


def test_the_monte_carlo_bot_plays_its_c_playouts_in_the_image(deployment: Deployment) -> None:
    """The builder compiled the MC bot's playouts (games/classic/sim/_native.c) into the wheel; the
    runtime, which has no compiler, runs them."""
    code = (
        "from games.classic.sim import playouts; print(playouts.NATIVE); "
        "import games.classic.sim._native as n; print(n.__file__)"
    )
    native, path = deployment.exec("worker", ["python", "-c", code], timeout=120).split()
    assert native == "True" and path.startswith("/opt/venv/"), (native, path)


def test_the_workers_take_the_referees_compiled_hot_path(deployment: Deployment) -> None:
    """The builder compiled the referee's hot path (referee.accel) against the wheel's sources, into
    /opt/venv/sixnimmt-compiled; a worker's processes, which run referees for their blocks, load it."""
    status = deployment.exec("worker", ["python", "-m", "referee.accel", "status"], timeout=120)
    assert status.strip() == "compiled: /opt/venv/sixnimmt-compiled", status


def _probe(deployment: Deployment, command: list[str]) -> bool:
    done = deployment.container("worker").run(deployment.spec("worker", command, tmpfs=False), timeout=60)
    if not deployment.running["worker"].alive():
        raise AssertionError(deployment.log("worker"))
    return done.returncode == 0


def test_a_submitted_bot_plays_a_league_to_the_end_through_the_worker(deployment: Deployment) -> None:
    """As docs/deploy.md says to run leagues: the commands in the worker's container (kubectl exec).
    The worker in the image plays every block, each bot under the sandbox (the confined bot fails
    its games otherwise)."""
    deployment.container("worker").copy(HERE / "bots" / "confined_bot.py", "/tmp/confined_bot.py")
    # What the sandbox reports in the worker's container: as root, every protection it knows holds
    # but the memory cgroup, which needs a cgroup the container may write (the runtime's
    # delegation; docs/security.md, "Not enforced"): without one it says why, and RLIMIT_AS holds.
    report = "import dataclasses, json; from workers.sandbox import Sandbox; " + (
        "print(json.dumps(dataclasses.asdict(Sandbox().enforced())))"
    )
    enforced = json.loads(deployment.exec("worker", ["python", "-c", report]))
    missing = [k for k, v in enforced.items() if v is False and not k.startswith("as_")]
    if "memory_cgroup" in missing:
        assert any("no memory cgroup" in note and "RLIMIT_AS" in note for note in enforced["notes"]), enforced
        missing.remove("memory_cgroup")
    assert not missing, f"the sandbox in the image's worker lacks {missing}: {enforced}"
    deployment.exec("worker", ["sixnimmt", "bot", "submit", "/tmp/confined_bot.py", "--name", "confined"])
    bots = ",".join(LEAGUE_BOTS)
    deployment.exec("worker", ["sixnimmt", "league", "create", "image", "--bots", bots, "--deals", "1"])
    deployment.exec("worker", ["sixnimmt", "league", "run", "image", "--json"], timeout=600)
    status = json.loads(deployment.exec("worker", ["sixnimmt", "league", "status", "image", "--json"]))
    assert set(status["blocks"]) == {"done"}, status
    assert not any(status["faults"].values()), status
    played = _metrics(deployment.host_port("worker", deployment.roles["worker"].metrics_port()))
    assert _sample(played, "sixnimmt_worker_blocks_total") >= status["blocks"]["done"], played
    table = json.loads(deployment.exec("worker", ["sixnimmt", "league", "standings", "image", "--json"]))
    print(json.dumps(table)[:2000])


def _sample(metrics: str, name: str) -> float:
    """The sum of a metric's samples (every label set)."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith((f"{name}{{", f"{name} "))
    )


def test_every_role_stops_cleanly_on_sigterm(deployment: Deployment) -> None:
    """SIGTERM, as the kubelet sends it: each role shuts down by itself within its grace period.
    uvicorn (the dashboard) re-raises SIGTERM once it has shut down, so a pod sees 143 there; its
    "Finished server process" line shows the shutdown was its own."""
    assert set(deployment.running) == {"referee", "dashboard", "worker"}
    codes = {}
    for component, running in deployment.running.items():
        grace = float(deployment.roles[component].workload.spec["terminationGracePeriodSeconds"])
        codes[component] = running.stop(min(STOP_GRACE_S, grace))
    logs = {c: deployment.log(c) for c in codes}
    assert codes["referee"] == 0, logs["referee"]
    assert codes["worker"] == 0, logs["worker"]
    assert codes["dashboard"] in (0, -signal.SIGTERM), logs["dashboard"]
    assert "Finished server process" in logs["dashboard"], logs["dashboard"]


def test_no_role_wrote_outside_its_emptydir(deployment: Deployment) -> None:
    """readOnlyRootFilesystem, which buildah run cannot set, checked afterwards: every write of a
    role with a read-only root (the commands run in the worker's container included) is under the
    paths its pod mounts, here /tmp."""
    mounted = {
        component: [m["mountPath"] for m in role.container.get("volumeMounts", [])]
        for component, role in deployment.roles.items()
    }
    assert set(deployment.containers) == {"referee", "dashboard", "worker", "migrate"}
    for component, container in deployment.containers.items():
        if not deployment.roles[component].container["securityContext"].get("readOnlyRootFilesystem"):
            continue
        changes = container.changes()
        print(f"{component} changed {changes}")
        outside = [
            path
            for path in changes
            if not any(path == m or path.startswith(m + "/") for m in mounted[component])
        ]
        # A directory above a mount shows as changed when something under the mount changed.
        outside = [path for path in outside if not any(m.startswith(path + "/") for m in mounted[component])]
        assert not outside, f"{component} wrote to its read-only root: {outside}"
