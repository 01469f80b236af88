"""Run a submitted bot as a confined process: ``spawn_bot(..., launch=Sandbox(limits))``.

What a sandboxed bot gets, and where each protection holds (``Sandbox().enforced()`` says
which ones hold on this machine; ``docs/sandbox.md`` explains them at length):

============================  ===========================  ====================================
protection                    as root                      as another user
============================  ===========================  ====================================
CPU, memory, file size,       always (setrlimit in the     always; the process count is per
process count (rlimits)       child before exec)           user, so the limit is added to what
                                                           the user already runs
private working directory,    always                       always
HOME and TMPDIR in it
scrubbed environment          always                       always
separate user (store file     a dedicated uid/gid per      no: the bot runs as the caller,
and credentials unreadable)   bot, never one in use        so it can read what the caller reads
no network (only the          new network namespace        only if unprivileged user
referee's Unix socket)        (CAP_SYS_ADMIN)              namespaces are allowed
process isolation             new PID namespace: the bot   same as the network
                              sees and signals only its
                              own processes; they all die
                              with it
private /tmp, /var/tmp,       new mount namespace          same as the network
/dev/shm; unreadable
directories hidden
============================  ===========================  ====================================

How: :class:`Sandbox` is a launcher. It starts this very file as a small bootstrap
(``python -I -S workers/sandbox.py CONFIG -- ARGV``) in a new session; the bootstrap is a
fresh single-threaded process, so it can safely create namespaces, mount, set the limits,
drop to the sandbox user and ``execve`` the bot. Nothing runs in a ``preexec_fn``, which is
unsafe in a parent with threads (a referee in a thread, gRPC). With a PID namespace the
bootstrap stays as a small root monitor outside it that forwards signals and reports the
bot's exit status as its own; the bot is PID 1 inside.

When running as root and the interpreter lives where the sandbox user cannot read it (here:
``/root/.pyenv``), the mount namespace hides the unreadable directory under an empty tmpfs and
binds back only the interpreter, the virtualenv and the project. Without a mount namespace that
is impossible and, as root, :class:`Sandbox` refuses to start the bot rather than run it as
root.

A bot file named in the command line (``x.py``, ``x.py:Class``) is made absolute and its directory
bound back if it is hidden; pass ``expose=`` for anything else the bot must read.

The referee must listen on a Unix socket (``unix:/path``): the bot gets a hard link to it (or a
bind mount) inside its private directory, and the socket file is made connectable by other
users (``chmod o+rw``; its directory can stay ``0700``). A TCP referee is unreachable from a
network namespace, so :class:`Sandbox` refuses it when the network is isolated.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from referee.settings import Settings

MIB = 1 << 20

DEFAULT_UIDS = range(0x7E000000, 0x7E000000 + 0x10000)
"""Sandbox users: one uid (and the same gid) per running bot, far from any real account."""

SETUP_FAILED = 125
"""Exit status of a bot process whose sandbox could not be set up (the bot never ran)."""

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
SUN_PATH_MAX = 108
"""Room for a Unix socket path (``sockaddr_un.sun_path``), its terminating NUL included."""
KEPT_FROM_CALLER = ("SIXNIMMT_REFEREE", "SIXNIMMT_TOKEN")
TMP_COVERS = ("/tmp", "/var/tmp", "/dev/shm")
"""World-writable directories replaced by a small private tmpfs when mounts are private."""

_PROJECT = Path(__file__).resolve().parents[1]

# Linux constants (Python 3.11 has no os.unshare / os.mount / prctl).
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38


class SandboxError(RuntimeError):
    """The sandbox cannot start a bot with the protections it must have here."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one bot process; 0 means no limit."""

    cpu_s: int = 600
    """CPU seconds (user + system); the process is killed (SIGKILL) when it reaches them."""
    memory_mb: int = 1024
    """Address space (RLIMIT_AS): allocations beyond it fail (``MemoryError`` in Python)."""
    file_mb: int = 16
    """Largest file the process may write (RLIMIT_FSIZE): writing past it fails with EFBIG."""
    processes: int = 64
    """Processes and threads of the sandbox user (RLIMIT_NPROC): ``fork`` fails with EAGAIN."""

    def __post_init__(self) -> None:
        for name in ("cpu_s", "memory_mb", "file_mb", "processes"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"Limits.{name} must be a non-negative integer, got {value!r}")

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Limits:
        """The limits from ``SIXNIMMT_SANDBOX_*`` (or from ``settings``)."""
        if settings is None:
            from referee.settings import load

            settings = load()
        return cls(
            cpu_s=settings.sandbox_cpu_s,
            memory_mb=settings.sandbox_memory_mb,
            file_mb=settings.sandbox_file_mb,
            processes=settings.sandbox_processes,
        )

    def rlimits(self) -> dict[str, int]:
        """``RLIMIT_*`` name → value (soft = hard); unlimited ones are left out."""
        values = {
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_AS": self.memory_mb * MIB,
            "RLIMIT_FSIZE": self.file_mb * MIB,
            "RLIMIT_NPROC": self.processes,
        }
        return {name: value for name, value in values.items() if value > 0}


@dataclass(frozen=True, slots=True)
class Level:
    """Which kernel features a launch uses (the probe picks the strongest that works)."""

    user_ns: bool = False
    """Non-root only: a user namespace, which lets an ordinary user create the others."""
    pid_ns: bool = False
    proc: bool = False
    """A fresh ``/proc`` showing only the bot's PID namespace."""
    mounts: bool = False
    net_ns: bool = False


@dataclass(frozen=True, slots=True)
class Enforcement:
    """Which protections hold for bots started by a :class:`Sandbox` on this machine."""

    as_root: bool
    limits: bool
    """CPU time, address space, file size and process count (always)."""
    private_dir: bool
    """A fresh working directory per bot (HOME, TMPDIR inside), removed afterwards (always)."""
    clean_env: bool
    """Only PATH, LANG, HOME, TMPDIR, PYTHONPATH (if needed) and the referee address and token."""
    separate_user: bool
    """A dedicated unprivileged uid/gid: files readable only by their owner (the store) are not."""
    network: bool
    """A network namespace without interfaces: only the referee's Unix socket is reachable."""
    pid_namespace: bool
    """The bot sees and signals only its own processes, which all die with it."""
    private_mounts: bool
    """Private /tmp, /var/tmp and /dev/shm; directories the bot's user cannot read are hidden."""
    notes: tuple[str, ...] = ()
    """Why a protection does not hold."""

    def holding(self) -> list[str]:
        """The names of the protections that hold."""
        return [name for name, value in asdict(self).items() if value is True and name != "as_root"]


_PROBED: dict[tuple[int, bool, str], tuple[Level, tuple[str, ...]]] = {}
_PROBE_LOCK = threading.Lock()


class Sandbox:
    """A bot launcher applying :class:`Limits` and isolation; see the module docstring.

    ``Sandbox(limits, workdir=base)`` makes each bot's private directory under ``base``
    (default: the system temporary directory). Use it as ``spawn_bot(..., launch=sandbox)``
    or call it directly: ``sandbox(argv, env)`` returns a :class:`SandboxedProcess`, whose
    directory and user are released once it has been waited for (or by :meth:`close`).
    """

    def __init__(
        self,
        limits: Limits | None = None,
        workdir: str | os.PathLike[str] | None = None,
        *,
        expose: Sequence[str | os.PathLike[str]] = (),
        hide: Sequence[str | os.PathLike[str]] | None = None,
        uids: range = DEFAULT_UIDS,
        namespaces: bool = True,
        stdout: int | IO[Any] | None = subprocess.DEVNULL,
        stderr: int | IO[Any] | None = None,
    ) -> None:
        """``expose``: extra paths the bot must read (e.g. its files) if they are hidden otherwise;
        ``hide``: files or directories made empty for the bot (default: the SQLite store of
        ``SIXNIMMT_DATABASE_URL``, if any, in case its mode lets others read it); both need
        private mounts. ``namespaces=False`` uses no namespaces at all (weaker; for tests)."""
        self.limits = limits or Limits()
        self.workdir = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
        self.expose = tuple(os.path.realpath(p) for p in expose)
        self.hide = tuple(os.path.realpath(p) for p in (_store_files() if hide is None else hide))
        self.uids = uids
        self.namespaces = namespaces
        self.stdout = stdout
        self.stderr = stderr
        self._running: weakref.WeakSet[SandboxedProcess] = weakref.WeakSet()
        self._notes: tuple[str, ...] = ()

    # -- what holds ---------------------------------------------------------------------------

    def enforced(self) -> Enforcement:
        """Which protections hold here (probes the kernel once, with a real sandboxed process)."""
        level = self.level()
        root = os.geteuid() == 0
        notes = list(self._notes)
        if not root:
            notes.append("not root: the bot runs as the calling user and can read what it reads")
        return Enforcement(
            as_root=root,
            limits=True,
            private_dir=True,
            clean_env=True,
            separate_user=root,
            network=level.net_ns,
            pid_namespace=level.pid_ns,
            private_mounts=level.mounts,
            notes=tuple(notes),
        )

    def level(self) -> Level:
        """The strongest :class:`Level` a sandboxed Python starts with here (probed once)."""
        key = (os.geteuid(), self.namespaces, str(self.workdir))
        with _PROBE_LOCK:
            if key not in _PROBED:
                _PROBED[key] = self._probe()
            level, self._notes = _PROBED[key]
        return level

    def _probe(self) -> tuple[Level, tuple[str, ...]]:
        root = os.geteuid() == 0
        candidates = [Level()]
        if self.namespaces:
            user = not root
            candidates = [
                Level(user, pid_ns=True, proc=True, mounts=True, net_ns=True),
                Level(user, pid_ns=True, mounts=True, net_ns=True),
                Level(user, mounts=True, net_ns=True),
                Level(user, net_ns=True),
                Level(),
            ]
        notes: list[str] = []
        probe = [sys.executable, "-c", "import os, sys; sys.stdout.write(str(os.getuid()))"]
        for level in candidates:
            try:
                # Default limits: the probe asks what the kernel allows, not whether the limits are sane.
                process = self._start(
                    probe, {}, level, Limits(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            except SandboxError as exc:
                notes.append(f"{_describe(level)}: {exc}")
                continue
            try:
                out, err = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
            if process.returncode == 0 and (not root or out.strip() != b"0"):
                if level != candidates[0]:
                    notes.append(f"using {_describe(level)}")
                return level, tuple(notes)
            reason = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {process.returncode}"]
            notes.append(f"{_describe(level)}: {reason[0]}")
        if root:
            notes.append(
                "as root, the bot runs as an unprivileged user, who must be able to read the interpreter "
                f"({sys.executable} and {sys.base_prefix}): without private mounts, which can hide "
                "what is around it, install Python and the project where other users can read them"
            )
        raise SandboxError("no sandbox configuration can start Python here:\n" + "\n".join(notes))

    # -- launching ----------------------------------------------------------------------------

    def __call__(self, argv: list[str], env: dict[str, str]) -> SandboxedProcess:
        """Start ``argv`` sandboxed; of ``env`` only the referee address and token are kept."""
        return self._start(argv, env, self.level(), self.limits, stdout=self.stdout, stderr=self.stderr)

    def _start(
        self,
        argv: list[str],
        env: Mapping[str, str],
        level: Level,
        limits: Limits,
        *,
        stdout: int | IO[Any] | None,
        stderr: int | IO[Any] | None,
    ) -> SandboxedProcess:
        root = os.geteuid() == 0
        lease = _UidLease.acquire(self.uids) if root else None
        uid = lease.uid if lease else os.getuid()
        gid = lease.uid if lease else os.getgid()
        directory: Path | None = None
        try:
            directory = Path(tempfile.mkdtemp(prefix="sixnimmt-bot-", dir=self.workdir))
            (directory / "tmp").mkdir(mode=0o700)
            if root:
                for path in (directory, directory / "tmp"):
                    os.chown(path, uid, gid)
            argv, bot_dirs = _bot_files(argv)
            environment = _environment(env, directory)
            binds: list[str] = []
            referee = environment.get("SIXNIMMT_REFEREE", "")
            if referee:
                environment["SIXNIMMT_REFEREE"] = _expose_socket(referee, directory, level, root, binds)
            config = {
                "uid": uid if root else None,
                "gid": gid if root else None,
                "workdir": str(directory),
                "rlimits": _rlimits(limits, root),
                "level": asdict(level),
                **_mount_plan(level, root, [str(directory), *self.expose, *bot_dirs], self.hide, limits),
                "socket_binds": [[b, str(directory / "referee.sock")] for b in binds],
            }
            command = [sys.executable, "-I", "-S", "-B", str(Path(__file__).resolve()), json.dumps(config)]
            process = SandboxedProcess(
                [*command, "--", *argv],
                env=environment,
                cwd=directory,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                close_fds=True,
            )
        except BaseException:
            if directory is not None:
                _remove_tree(directory)
            if lease:
                lease.release()
            raise
        process._attach(_Resources(directory, lease, process.pid, level.pid_ns))
        self._running.add(process)
        return process

    # -- cleaning up --------------------------------------------------------------------------

    def close(self) -> None:
        """Kill every bot this sandbox started that still runs, and release what they held."""
        for process in list(self._running):
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            process.wait()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SandboxedProcess(subprocess.Popen[bytes]):
    """A sandboxed bot; waiting for it (``wait``, ``poll``, ``communicate``) releases its sandbox."""

    _resources: _Resources | None = None
    _finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    @property
    def directory(self) -> Path | None:
        """The bot's private working directory (gone once the process has been waited for)."""
        return self._resources.directory if self._resources else None

    @property
    def uid(self) -> int | None:
        """The sandbox user's uid while the process holds it (root only)."""
        lease = self._resources.lease if self._resources else None
        return lease.uid if lease else None

    def _attach(self, resources: _Resources) -> None:
        self._resources = resources
        self._finalizer = weakref.finalize(self, resources.release)

    def send_signal(self, sig: int) -> None:
        """Signal the bot; SIGKILL (``kill()``) goes to the bot itself, past its monitor."""
        if sig == signal.SIGKILL and self._resources is not None and self._resources.pid_ns:
            # Killing the monitor first would orphan the bot to PID 1, which may never reap it;
            # killed, the bot is reaped by its monitor, which then exits by SIGKILL as well.
            self.poll()
            if self.returncode is not None:
                return
            inside = _children(self.pid)
            for pid in inside:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if inside:
                return
        super().send_signal(sig)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the process, then remove its directory and release its user."""
        code = super().wait(timeout)
        self._release()
        return code

    def poll(self) -> int | None:
        """Like :meth:`subprocess.Popen.poll`; releases the sandbox once the process is gone."""
        code = super().poll()
        if code is not None:
            self._release()
        return code

    def _release(self) -> None:
        if self._finalizer is not None:
            self._finalizer()


@dataclass(slots=True)
class _Resources:
    """What one bot holds: its directory and its uid; released once, after it has exited."""

    directory: Path | None
    lease: _UidLease | None
    pid: int
    pid_ns: bool
    released: bool = field(default=False)

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if not self.pid_ns:
            # Without a PID namespace, children of the bot may outlive it.
            if self.lease is not None:
                _kill_uid(self.lease.uid)
            else:
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, signal.SIGKILL)
        if self.directory is not None:
            _remove_tree(self.directory)
        if self.lease is not None:
            self.lease.release()


class _UidLease:
    """A sandbox uid held by this process: an abstract Unix socket named after it is bound."""

    def __init__(self, uid: int, holder: socket.socket) -> None:
        self.uid = uid
        self._holder: socket.socket | None = holder

    @classmethod
    def acquire(cls, uids: range) -> _UidLease:
        if not uids:
            raise SandboxError("no sandbox uids configured")
        start = int.from_bytes(os.urandom(4), "little") % len(uids)
        for i in range(len(uids)):
            uid = uids[(start + i) % len(uids)]
            holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                holder.bind(f"\0sixnimmt-sandbox-uid-{uid}")
            except OSError:
                holder.close()
                continue
            if _processes_of(uid):  # left over by a crashed launcher: not clean, skip it
                holder.close()
                continue
            return cls(uid, holder)
        raise SandboxError(f"all {len(uids)} sandbox uids are in use")

    def release(self) -> None:
        if self._holder is not None:
            self._holder.close()
            self._holder = None


# -- helpers of the launcher ------------------------------------------------------------------


def _rlimits(limits: Limits, root: bool) -> dict[str, int]:
    values = limits.rlimits()
    if "RLIMIT_NPROC" in values and not root:
        # The count covers every process of the user, not only the bot's.
        values["RLIMIT_NPROC"] += _tasks_of(os.getuid())
    return values


def _describe(level: Level) -> str:
    parts = [name for name, value in asdict(level).items() if value]
    return "namespaces " + "+".join(parts) if parts else "no namespaces"


def _bot_files(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` with its bot file specs (``x.py``, ``x.py:Class``) absolute, and their directories.

    The bot starts in its private directory, so a relative spec would not resolve; and the
    directory must be bound back if it lies under a hidden directory or /tmp.
    """
    result, directories = [argv[0]], []
    for arg in argv[1:]:
        stem, sep, name = arg.partition(".py:")
        path = stem + ".py" if sep else arg
        if path.endswith(".py") and os.path.isfile(path):
            absolute = os.path.realpath(path)
            directories.append(os.path.dirname(absolute))
            arg = absolute + (f":{name}" if sep else "")
        result.append(arg)
    return result, directories


def _environment(env: Mapping[str, str], directory: Path) -> dict[str, str]:
    """The bot's whole environment: nothing of the caller's but the referee address and token."""
    environment = {
        "PATH": SAFE_PATH,
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "HOME": str(directory),
        "TMPDIR": str(directory / "tmp"),
    }
    if not _project_installed():
        environment["PYTHONPATH"] = str(_PROJECT)
    environment.update({k: env[k] for k in KEPT_FROM_CALLER if k in env})
    return environment


def _project_installed() -> bool:
    """Whether this interpreter imports the project without help (an editable or real install)."""
    from importlib import metadata

    try:
        metadata.distribution("sixnimmt-arena")
    except metadata.PackageNotFoundError:
        return False
    return True


def _unix_path(address: str) -> str | None:
    if address.startswith("unix://"):
        return address[len("unix://") :]
    if address.startswith("unix:"):
        return os.path.abspath(address[len("unix:") :])
    return None


def _expose_socket(address: str, directory: Path, level: Level, root: bool, binds: list[str]) -> str:
    """Give the bot the referee's socket inside its directory; returns the address it uses."""
    path = _unix_path(address)
    if path is None:
        if level.net_ns:
            raise SandboxError(
                f"the referee listens on {address!r}, which a bot without network cannot reach: "
                "serve it on a Unix socket (unix:/path)"
            )
        return address
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SandboxError(f"no referee socket at {path}: {exc}") from None
    if root and mode & 0o006 != 0o006:
        os.chmod(path, stat.S_IMODE(mode) | 0o006)  # connect() needs write permission
    target = directory / "referee.sock"
    try:
        os.link(path, target)
    except OSError:
        if not level.mounts:
            if root and _blocked_ancestor(path) is not None:
                raise SandboxError(
                    f"the sandbox user cannot reach the referee socket {path} and it cannot be linked "
                    f"into {directory}: make its directory searchable (chmod o+x) or put the sandbox "
                    "directories on the same file system"
                ) from None
            return address
        target.touch(mode=0o666)
        binds.append(path)
    if len(os.fsencode(target)) < SUN_PATH_MAX:
        return f"unix:{target}"
    # Too long for a socket address: relative to the bot's working directory, where it starts.
    return f"unix:{target.name}"


def _needed_paths() -> list[str]:
    """What the bot's Python must read: the interpreter, its prefixes and the project."""
    paths = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, _PROJECT)
    }
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(paths)


def _blocked_ancestor(path: str) -> str | None:
    """The first directory above ``path`` that other users cannot search (None: all can)."""
    current = "/"
    for part in Path(path).parts[1:-1]:
        current = os.path.join(current, part)
        try:
            if not os.stat(current).st_mode & stat.S_IXOTH:
                return current
        except OSError:
            return None
    return None


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _mount_plan(
    level: Level, root: bool, extra: Iterable[str], hide: Iterable[str], limits: Limits
) -> dict[str, Any]:
    """The tmpfs covers, the bind mounts restoring what the bot needs beneath them, the masks.

    ``extra`` paths (the bot's directory, exposed paths) are needed as well; directories other
    users cannot search are hidden (as root); /tmp, /var/tmp and /dev/shm get a private tmpfs;
    ``hide`` paths that the bot would see are masked (files by /dev/null, directories by an
    empty tmpfs).
    """
    if not level.mounts:
        return {"covers": [], "binds": [], "masks": []}
    needed = [*_needed_paths(), *extra]
    hidden = {a for p in needed if root and (a := _blocked_ancestor(p)) is not None}
    covers: dict[str, str] = {d: "0755" for d in hidden}
    for tmp in TMP_COVERS:
        if os.path.isdir(tmp) and not any(_under(tmp, p) for p in needed):
            covers[tmp] = "1777"
    # Only the outermost covers count: an inner one is hidden by the outer anyway.
    outer = {d: m for d, m in covers.items() if not any(o != d and _under(d, o) for o in covers)}
    binds = sorted({p for p in needed if any(_under(p, d) and p != d for d in outer)})
    # A path inside another bound path comes back with it.
    binds = [p for p in binds if not any(q != p and _under(p, q) for q in binds)]
    masks = [
        p
        for p in hide
        if os.path.exists(p)
        and (not any(_under(p, d) for d in outer) or any(_under(p, b) and p != b for b in binds))
    ]
    size = max(limits.file_mb, 1)
    return {
        "covers": [[d, m, size if m == "1777" else 1] for d, m in sorted(outer.items())],
        "binds": binds,
        "masks": masks,
    }


def _store_files() -> list[str]:
    """The files of the SQLite store named by ``SIXNIMMT_DATABASE_URL`` (none for other stores)."""
    from referee.settings import load

    url = load().database_url
    if not url.startswith("sqlite:///"):
        return []
    path = url[len("sqlite:///") :].split("?", 1)[0]
    if not path or path == ":memory:":
        return []
    return [path + suffix for suffix in ("", "-wal", "-shm", "-journal")]


def _remove_tree(directory: Path) -> None:
    def unlock(function: Any, path: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
            function(path)
        except OSError:
            pass

    shutil.rmtree(directory, onerror=unlock)


def _processes_of(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real, effective or saved uid is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if str(uid) in fields.get("Uid", "").split()[:3]:
            found.append(int(name))
    return found


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` until none is left (a fork bomb is capped by its rlimit)."""
    for _ in range(100):
        pids = _processes_of(uid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _tasks_of(uid: int) -> int:
    """How many tasks (threads) the user runs now."""
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    total += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return total


# -- the bootstrap: runs as ``python -I -S sandbox.py CONFIG -- ARGV`` ---------------------------


class _SetupError(Exception):
    pass


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise _SetupError(f"{what}: {os.strerror(err)} (errno {errno.errorcode.get(err, err)})")


def _mount(
    libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    def b(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    _check(libc.mount(b(source), b(target), b(fstype), flags, b(data)), f"mount {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _setup_mounts(libc: ctypes.CDLL, config: dict[str, Any], proc: bool) -> None:
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE, None)  # nothing leaks to the host
    held = {p: os.open(p, os.O_PATH) for p in config["binds"]}
    held.update({s: os.open(s, os.O_PATH) for s, _ in config["socket_binds"]})
    for directory, mode, size_mb in config["covers"]:
        data = f"mode={mode},size={size_mb}m,nr_inodes=4096"
        _mount(libc, "tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, data)
    for path in config["binds"]:
        if os.path.isdir(f"/proc/self/fd/{held[path]}"):
            os.makedirs(path, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            if not os.path.exists(path):
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        _mount(libc, f"/proc/self/fd/{held[path]}", path, None, MS_BIND | MS_REC, None)
    for source, target in config["socket_binds"]:
        _mount(libc, f"/proc/self/fd/{held[source]}", target, None, MS_BIND, None)
    for fd in held.values():
        os.close(fd)
    for path in config["masks"]:
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=16")
        else:
            _mount(libc, "/dev/null", path, None, MS_BIND, None)
    if proc:
        _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)


def _monitor(child: int) -> NoReturn:
    """Outside the PID namespace: forward signals to the bot, then exit as it did."""
    received: list[int] = []
    # PID 1 of a namespace ignores signals it has no handler for (SIGTERM), so stop it for good.
    forward = {signal.SIGTERM: signal.SIGKILL, signal.SIGHUP: signal.SIGKILL, signal.SIGQUIT: signal.SIGKILL}

    def relay(signum: int, _frame: object) -> None:
        received.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, forward.get(signal.Signals(signum), signum))

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(s, relay)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL and received and received[-1] in forward:
            sig = received[-1]
        for s in signal.Signals:
            if s not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(s, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        time.sleep(1)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else SETUP_FAILED)


def _bootstrap(config: dict[str, Any], argv: list[str]) -> NoReturn:
    """Set the sandbox up around this process and exec ``argv`` (see the module docstring)."""
    level = Level(**config["level"])
    libc = _libc()
    libc.unshare.argtypes = [ctypes.c_int]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    uid, gid = os.getuid(), os.getgid()
    first = (CLONE_NEWUSER if level.user_ns else 0) | (CLONE_NEWPID if level.pid_ns else 0)
    if first:
        _check(libc.unshare(first), "unshare(user/pid)")
    if level.user_ns:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    if level.pid_ns:
        child = os.fork()
        if child:
            _monitor(child)
        _check(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PDEATHSIG)")
    second = (CLONE_NEWNS if level.mounts else 0) | (CLONE_NEWNET if level.net_ns else 0)
    if second:
        _check(libc.unshare(second), "unshare(mount/net)")
    if level.mounts:
        _setup_mounts(libc, config, level.proc)
    for name, value in config["rlimits"].items():
        limit = getattr(resource, name)
        hard = resource.getrlimit(limit)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(config["workdir"])
    os.umask(0o077)
    if config["uid"] is not None:
        os.setgroups([])
        os.setresgid(config["gid"], config["gid"], config["gid"])
        os.setresuid(config["uid"], config["uid"], config["uid"])
        if level.pid_ns:  # changing credentials cleared it
            _check(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PDEATHSIG)")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    os.execvpe(argv[0], argv, dict(os.environ))


def _bootstrap_main(args: list[str]) -> NoReturn:
    try:
        config, dash, argv = json.loads(args[0]), args[1], args[2:]
        if dash != "--" or not argv:
            raise _SetupError("usage: sandbox.py CONFIG -- ARGV")
        _bootstrap(config, argv)
    except (_SetupError, OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"sandbox: setup failed: {exc}\n")
        sys.stderr.flush()
        os._exit(SETUP_FAILED)


if __name__ == "__main__":
    _bootstrap_main(sys.argv[1:])
