"""Run the built image as the production overlay runs it, without a container engine daemon.

Each role gets a working container of the image (``buildah from``), the pod's one container, and
its process runs in it with ``buildah run --isolation chroot --network host`` (``podman run``
cannot set rlimits here). What the pod spec says is carried over: the image's entry point with the
container's args, the environment built from the ConfigMap and the Secret references, the user
(``runAsUser``/``runAsGroup``), exactly the capability set (drop ALL, add the listed ones), a tmpfs
on ``/tmp`` (the ``emptyDir``), the hostname (a pod's name). A container's ports are published by
rewriting them to free host ports in its env and args (the network is the host's), as ``-p`` would
map them. What cannot be carried over is listed in docs/deploy.md, "How this is tested".
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import deploykit as dk
from testkit import free_port as free_port  # re-exported for this kit's users
from testkit import wait_for as wait_for

T = TypeVar("T")

CAPABILITIES = (
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
    "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
    "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
    "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
    "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
    "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
)  # fmt: skip
"""Linux capabilities in bit order (capabilities(7)), to read ``CapEff`` from /proc."""


SIGNALS = {
    "hangup": signal.SIGHUP, "interrupt": signal.SIGINT, "quit": signal.SIGQUIT, "aborted": signal.SIGABRT,
    "killed": signal.SIGKILL, "segmentation fault": signal.SIGSEGV, "terminated": signal.SIGTERM,
}  # fmt: skip
"""How ``buildah run`` names the signal that ended its process (Go's names)."""


def buildah(*args: str, timeout: float = 120) -> str:
    done = subprocess.run(["buildah", *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"buildah {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def image_config(image: str) -> dict[str, Any]:
    """The image's OCI config (User, Entrypoint, Env, WorkingDir, ...)."""
    return dict(json.loads(buildah("inspect", "--type", "image", image))["OCIv1"]["config"])


# -- what the overlay gives a role ------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """One container of a rendered overlay, as the kubelet would start it."""

    component: str
    workload: dk.Workload
    env: dict[str, str | dk.External]

    @property
    def container(self) -> dict[str, Any]:
        return self.workload.container

    @property
    def args(self) -> list[str]:
        return list(self.container.get("args", []))

    def user(self, image_user: str) -> tuple[int, int]:
        """(uid, gid): the container's securityContext over the pod's over the image's USER."""
        pod = self.workload.spec.get("securityContext", {})
        own = self.container.get("securityContext", {})
        image_uid, _, image_gid = image_user.partition(":")
        uid = own.get("runAsUser", pod.get("runAsUser", int(image_uid or 0)))
        gid = own.get("runAsGroup", pod.get("runAsGroup", int(image_gid or uid)))
        return int(uid), int(gid)

    def capabilities(self) -> frozenset[str]:
        """The capability set the container gets: every manifest here drops ALL, then adds some."""
        caps = self.container.get("securityContext", {}).get("capabilities", {})
        assert caps.get("drop") == ["ALL"], f"{self.component}: only 'drop: [ALL]' is carried over: {caps}"
        return frozenset(caps.get("add") or ())

    def ports(self) -> dict[str, int]:
        return {p["name"]: int(p["containerPort"]) for p in self.container.get("ports", [])}

    def metrics_port(self) -> int:
        """The port Prometheus scrapes, from the pod's annotation."""
        return int(self.workload.pod["metadata"]["annotations"]["prometheus.io/port"])


def roles(overlay: str) -> dict[str, Role]:
    objs = dk.render(overlay)
    return {
        name: Role(name, workload, dk.container_env(workload.container, objs))
        for name, workload in dk.workloads(objs).items()
    }


def resolve_env(
    env: Mapping[str, str | dk.External], secrets: Mapping[str, str], overrides: Mapping[str, str]
) -> dict[str, str]:
    """The environment with the Secret's keys filled in (a key the test does not know fails)."""
    out: dict[str, str] = {}
    for name, value in env.items():
        if isinstance(value, dk.External):
            assert value.kind == "Secret" and value.name == dk.SECRET, f"{name}: unexpected {value}"
            assert value.key in secrets, f"{name} needs the Secret key {value.key!r}, unknown to this test"
            out[name] = secrets[value.key]
        else:
            out[name] = value
    return out | dict(overrides)


def publish(
    env: dict[str, str], args: list[str], ports: Mapping[int, int]
) -> tuple[dict[str, str], list[str]]:
    """Env and args with each container port moved to its host port (``port``, ``host:port``)."""

    def move(value: str) -> str:
        host, colon, port = value.rpartition(":")
        if port.isdigit() and int(port) in ports:
            return f"{host}{colon}{ports[int(port)]}"
        return value

    return {k: move(v) for k, v in env.items()}, [move(a) for a in args]


# -- containers -------------------------------------------------------------------------------


@dataclass
class Spec:
    """How one process starts in a container: what the pod spec says, after publishing ports."""

    argv: list[str]
    env: dict[str, str]
    user: tuple[int, int]
    capabilities: frozenset[str]
    hostname: str
    tmpfs: bool = True


@dataclass
class Container:
    """A working container of the image (``buildah from``): the filesystem of one pod's container."""

    image: str
    name: str
    id: str = field(init=False)

    def __post_init__(self) -> None:
        subprocess.run(["buildah", "rm", self.name], capture_output=True, timeout=60)  # a leftover
        self.id = buildah("from", "--quiet", "--pull-never", "--name", self.name, self.image)

    def command(self, spec: Spec) -> list[str]:
        drop = [c for c in CAPABILITIES if c not in spec.capabilities]
        options = ["--isolation", "chroot", "--network", "host", "--hostname", spec.hostname]
        options += ["--user", f"{spec.user[0]}:{spec.user[1]}"]
        options += [f"--cap-add=CAP_{c}" for c in sorted(spec.capabilities)]
        options += [f"--cap-drop=CAP_{c}" for c in drop]
        if spec.tmpfs:
            options += ["--mount", "type=tmpfs,destination=/tmp,tmpfs-mode=1777"]
        for key, value in {**spec.env, "HOSTNAME": spec.hostname}.items():
            options += ["--env", f"{key}={value}"]
        return ["buildah", "run", *options, self.id, "--", *spec.argv]

    def start(self, spec: Spec, log: Path) -> Running:
        with log.open("ab") as out:
            process = subprocess.Popen(self.command(spec), stdout=out, stderr=out, start_new_session=True)
        return Running(process, spec, log)

    def run(self, spec: Spec, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(spec), capture_output=True, text=True, timeout=timeout)

    def copy(self, source: Path, destination: str) -> None:
        buildah("copy", "--chmod", "0644", self.id, str(source), destination)

    def changes(self) -> list[str]:
        """Paths added, changed or deleted in the container's own layer (``podman diff``)."""
        done = subprocess.run(["podman", "diff", self.id], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return [line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.strip()]

    def remove(self) -> None:
        subprocess.run(["buildah", "rm", self.id], capture_output=True, timeout=60)


@dataclass
class Running:
    """A role's process in its container; :attr:`pid` is the role's own process (host pid)."""

    process: subprocess.Popen[bytes]
    spec: Spec
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def pid(self) -> int:
        """The first process under ``buildah run`` that is not buildah's: the entry point's."""

        def find() -> int | None:
            if not self.alive():
                raise AssertionError(f"{self.spec.argv} exited with {self.process.returncode}")
            todo = [self.process.pid]
            while todo:
                pid = todo.pop(0)
                for child in _children(pid):
                    comm = _read(f"/proc/{child}/comm")
                    if comm and "buildah" not in comm:
                        return child
                    todo.append(child)
            return None

        return wait_for(find, 30, f"the process of {self.spec.argv}", interval=0.05)

    def status(self) -> dict[str, str]:
        """/proc/PID/status of the role's process (uid, gid, capabilities)."""
        lines = (_read(f"/proc/{self.pid}/status") or "").splitlines()
        return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}

    def capabilities(self) -> frozenset[str]:
        bits = int(self.status()["CapEff"], 16)
        return frozenset(c for i, c in enumerate(CAPABILITIES) if bits >> i & 1)

    def stop(self, grace: float) -> int:
        """SIGTERM to the role's process, as the kubelet sends it; its exit status (``-N``: signal N)."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
        try:
            return self.exit_status(self.process.wait(grace))
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"{self.spec.argv} did not stop within {grace:.0f} s of SIGTERM") from None

    def exit_status(self, code: int) -> int:
        """The role's own exit status: ``buildah run`` exits 1 for any failure and says why last."""
        if code == 0:
            return 0
        for line in self.log.read_text(errors="replace").splitlines()[-5:]:  # the child's line first
            said = line.strip()
            if said.startswith("subprocess exited with status "):
                return int(said.rsplit(" ", 1)[1])
            if said.startswith("subprocess exited on "):
                return -SIGNALS.get(said.removeprefix("subprocess exited on "), 0) or code
        return code

    def kill(self) -> None:
        if self.alive():
            for pid in [*_descendants(self.process.pid), self.process.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.process.wait(30)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(c) for c in (_read(str(task / "children")) or "").split()]
    return found


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        children = _children(todo.pop())
        out += children
        todo += children
    return out


def have_buildah() -> str | None:
    """Why the image cannot be run here, or None."""
    if shutil.which("buildah") is None:
        return "buildah is not installed (Debian: apt-get install buildah)"
    if os.geteuid() != 0:
        return "buildah with chroot isolation needs root here"
    return None
