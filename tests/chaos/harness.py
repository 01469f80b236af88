"""Several hosts on one machine: network namespaces joined by veth pairs, for the chaos scenarios.

Layout (every name and address made here, and nothing else touched)::

    namespace <p>s  "store host"  PostgreSQL (a private cluster) and Redis (no persistence)
        veth 10.99.1.1/24 ──── 10.99.1.2/24  namespace <p>1  "worker host 1": sixnimmt worker
        veth 10.99.2.1/24 ──── 10.99.2.2/24  namespace <p>2  "worker host 2": sixnimmt worker

Workers reach the store and the broker only over their own link; each plays its blocks with
its own referee (inside the worker) and its own temporary directory. The test itself watches the
store and the broker through their Unix sockets (which no namespace affects), so it sends no
packet anywhere. Cutting a link takes its veth down on both ends; :meth:`Hosts.close` kills every
process in the namespaces and deletes them (the veths go with them). Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from testkit import wait_for as wait_for  # re-exported for this kit's users

PROJECT = Path(__file__).resolve().parents[2]


def _workers_conftest() -> Any:
    """The league tests' helpers (process trees, store facts), loaded from their conftest."""
    spec = importlib.util.spec_from_file_location("workers_conftest", PROJECT / "tests/workers/conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _workers_conftest()
PG_BIN = Path(os.environ.get("SIXNIMMT_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_PORT = 5433
REDIS_PORT = 6390


def run(*argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=timeout)


def usable() -> str | None:
    """Why the harness cannot run here, or ``None``."""
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    for tool in ("ip", "redis-server", "runuser"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    if not (PG_BIN / "initdb").exists():
        return f"no PostgreSQL binaries in {PG_BIN}"
    probe = f"sxnprobe{os.getpid()}"
    done = run("ip", "netns", "add", probe, check=False)
    if done.returncode != 0:
        return f"ip netns add fails here: {done.stderr.strip()}"
    run("ip", "netns", "del", probe, check=False)
    return None


class Hosts:
    """The three namespaces and their links (see the module docstring)."""

    def __init__(self) -> None:
        tag = f"sxn{os.getpid() % 100000}"
        self.store = f"{tag}s"
        self.workers = {1: f"{tag}w1", 2: f"{tag}w2"}
        self.links: dict[int, tuple[str, str]] = {n: (f"{tag}s{n}", f"{tag}h{n}") for n in (1, 2)}
        self.made: list[str] = []
        try:
            for name in (self.store, *self.workers.values()):
                run("ip", "netns", "add", name)
                self.made.append(name)
                run("ip", "-n", name, "link", "set", "lo", "up")
            for n, (store_end, worker_end) in self.links.items():
                run("ip", "link", "add", store_end, "type", "veth", "peer", "name", worker_end)
                run("ip", "link", "set", store_end, "netns", self.store)
                run("ip", "link", "set", worker_end, "netns", self.workers[n])
                run("ip", "-n", self.store, "addr", "add", f"{self.store_address(n)}/24", "dev", store_end)
                run("ip", "-n", self.workers[n], "addr", "add", f"10.99.{n}.2/24", "dev", worker_end)
                self.set_link(n, up=True)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def store_address(n: int) -> str:
        """The store host's address on worker host ``n``'s link."""
        return f"10.99.{n}.1"

    def exec_in(self, namespace: str) -> list[str]:
        return ["ip", "netns", "exec", namespace]

    def set_link(self, n: int, *, up: bool) -> None:
        """Bring worker host ``n``'s link up or down (both ends)."""
        store_end, worker_end = self.links[n]
        state = "up" if up else "down"
        run("ip", "-n", self.store, "link", "set", store_end, state)
        run("ip", "-n", self.workers[n], "link", "set", worker_end, state)

    def close(self) -> None:
        """Kill whatever runs in the namespaces, then delete them (and their veths)."""
        for name in reversed(self.made):
            pids = run("ip", "netns", "pids", name, check=False).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
        for name in reversed(self.made):
            for _ in range(50):
                if run("ip", "netns", "del", name, check=False).returncode == 0:
                    break
                time.sleep(0.1)
        self.made.clear()


class Postgres:
    """A private PostgreSQL cluster on the store host, listening on both links and a Unix socket."""

    def __init__(self, hosts: Hosts) -> None:
        self.hosts = hosts
        self.root = Path(tempfile.mkdtemp(prefix="sxn-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o755)
        self._as_postgres(PG_BIN / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        with open(self.data / "pg_hba.conf", "a") as hba:  # the worker hosts' links, and only them
            hba.write("".join(f"host all postgres 10.99.{n}.2/32 trust\n" for n in (1, 2)))

    def _as_postgres(self, *argv: Any, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [*self.hosts.exec_in(self.hosts.store), "runuser", "-u", "postgres", "--", *map(str, argv)]
        return subprocess.run(
            command, capture_output=True, text=True, check=check, timeout=120, cwd=self.root
        )

    def start(self) -> None:
        listen = ",".join(Hosts.store_address(n) for n in (1, 2))
        options = f"-p {PG_PORT} -k {self.root} -c listen_addresses={listen} -c fsync=off"
        done = self._as_postgres(
            PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "start", check=False
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"pg_ctl start failed: {done.stdout}{done.stderr}{self.log.read_text()[-2000:]}"
            )

    def stop(self) -> None:
        self._as_postgres(PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(
            host=str(self.root), port=PG_PORT, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')

    def local_url(self, database: str) -> str:
        """The URL for the test (the Unix socket)."""
        return f"postgresql+psycopg://postgres@/{database}?host={self.root}&port={PG_PORT}"

    def url_for(self, n: int, database: str) -> str:
        """The URL for worker host ``n``: over its link, giving up on a dead link in seconds."""
        options = "connect_timeout=3&keepalives=1&keepalives_idle=2&keepalives_interval=1&keepalives_count=2"
        return (
            f"postgresql+psycopg://postgres@{Hosts.store_address(n)}:{PG_PORT}/{database}"
            f"?{options}&tcp_user_timeout=4000"
        )

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Redis:
    """A Redis on the store host without persistence: a restart loses every message."""

    def __init__(self, hosts: Hosts) -> None:
        self.hosts = hosts
        self.root = Path(tempfile.mkdtemp(prefix="sxn-redis-"))
        self.socket = self.root / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binds = [Hosts.store_address(n) for n in (1, 2)]
        argv = [
            *self.hosts.exec_in(self.hosts.store),
            "redis-server",
            "--port", str(REDIS_PORT),
            "--bind", *binds,
            "--protected-mode", "no",
            "--save", "",
            "--appendonly", "no",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.root),
            "--logfile", str(self.root / "log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        wait_for(self._ready, 20, "redis to accept connections")

    def _ready(self) -> bool:
        import redis

        try:
            client = redis.Redis(unix_socket_path=str(self.socket), socket_timeout=1)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except redis.RedisError:
            return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()

    def local_url(self) -> str:
        return f"redis+socket://{self.socket}"

    def url_for(self, n: int) -> str:
        return f"redis://{Hosts.store_address(n)}:{REDIS_PORT}/0"

    def destroy(self) -> None:
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)


class Worker:
    """``sixnimmt worker`` on worker host ``n`` (its own namespace and temporary directory)."""

    def __init__(
        self, hosts: Hosts, n: int, env: Mapping[str, str], logs: Path, name: str, tmp: Path | None = None
    ) -> None:
        self.n = n
        self.name = name
        # Short: the referee's Unix socket lives under it (a path of at most 107 bytes).
        self.tmp = tmp or Path(tempfile.mkdtemp(prefix=f"sxn{n}-"))
        self.tmp.chmod(0o711)
        self.log_path = logs / f"{name}.log"
        self.environ = {**os.environ, **env, "TMPDIR": str(self.tmp), "PYTHONUNBUFFERED": "1"}
        argv = [
            *hosts.exec_in(hosts.workers[n]),
            sys.executable, "-m", "celery", "-A", "workers.queue.app", "worker",
            "--pool=prefork", "--concurrency=1", f"--hostname={name}@host{n}", "--loglevel=INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        self._log = open(self.log_path, "a")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            argv,
            cwd=PROJECT,
            env=self.environ,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def wait_ready(self, timeout: float = 60) -> Worker:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"worker {self.name} exited:\n{self.log()[-3000:]}")
            return self.log().count(" ready.") >= 1

        wait_for(ready, timeout, f"worker {self.name} to be ready")
        return self

    def leftovers(self) -> list[str]:
        """Block and bot directories in this host's temporary directory."""
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("sixnimmt-"))

    def kill9(self) -> None:
        """kill -9 the worker and every process under it, at once."""
        helpers.kill_tree(self.process.pid)
        self.process.wait(30)

    def terminate(self) -> None:
        """SIGTERM to the worker's main process only, as Kubernetes sends it."""
        self.process.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        if self.process.poll() is None or helpers.descendants(self.process.pid):
            helpers.kill_tree(self.process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        self._log.close()

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


@contextlib.contextmanager
def cluster() -> Iterator[tuple[Hosts, Postgres, Redis]]:
    """The hosts with the store and the broker running; everything torn down afterwards."""
    hosts = Hosts()
    postgres: Postgres | None = None
    broker: Redis | None = None
    try:
        postgres = Postgres(hosts)
        postgres.start()
        broker = Redis(hosts)
        broker.start()
        yield hosts, postgres, broker
    finally:
        if broker is not None:
            broker.destroy()
        if postgres is not None:
            postgres.destroy()
        hosts.close()
