"""Run a submitted bot as a confined process: ``spawn_bot(..., launch=Sandbox(limits))``.

Every bot runs under bubblewrap (``bwrap``) in a root of its own that holds only an allow-list:
``/usr`` (and the ``/bin``, ``/lib*`` links into it), ``/etc/ld.so.cache``, the interpreter and
its virtualenv, the project's packages ``bot_sdk``, ``referee`` and ``sixnimmt``, all read-only;
the bot's own directory, read-only; a private working directory (HOME, TMPDIR; a small tmpfs); the referee's
Unix socket at ``/referee.sock``; small private tmpfs mounts on ``/tmp`` and ``/dev/shm``; a new
``/proc`` and a minimal ``/dev``. No other host path exists inside. It runs in new network, PID,
IPC, UTS and cgroup namespaces, in a new session, as a dedicated unprivileged uid/gid per bot
(root only), with no capabilities, ``no_new_privs``, rlimits on CPU time, address space, file
size and process count, a seccomp filter (:mod:`workers.sandbox.seccomp`) and, where the machine lets it,
a memory cgroup of its own (:mod:`workers.sandbox.cgroups`). A command bot's command line binds nothing:
its program is an allow-listed interpreter or a file in its own directory
(:func:`bot_sdk.command.check_confined`, checked again here since the store is untrusted).
``docs/sandbox.md`` says what each protection stops and what it costs.

The glue, in order: ``prlimit`` sets the rlimits, ``bwrap`` builds the namespaces and the root
and loads the seccomp filter (meanwhile the launcher moves PID 1 into the bot's memory cgroup),
a shell as PID 1 of the namespace starts the bot and ends the namespace when the bot ends, and,
as root, ``setpriv`` drops to the bot's uid, clears every capability set and sets
``no_new_privs`` before it ``exec``s the bot. As root, bwrap must not
create a user namespace: the bot's uid has to be a real host uid, so that its process count and
its files are its own. As another user, bwrap makes a user namespace mapping only that user.

Without ``bwrap`` (Debian: ``apt-get install bubblewrap``) or without libseccomp and its binding
``pyseccomp``, :class:`Sandbox` refuses to start (:class:`SandboxError`); it never runs a bot
unconfined. Tests of the rest of the league run bots
without any launcher instead (``claim_and_play(..., sandbox=False)``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import select
import shlex
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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from importlib import util as import_util
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot_sdk.command import CommandError, check_confined
from referee.settings import load as load_settings
from workers.sandbox import cgroups, seccomp

if TYPE_CHECKING:
    from referee.settings import Settings

MIB = 1 << 20

DEFAULT_UIDS = range(0x7E000000, 0x7E000000 + 0x10000)
"""Sandbox users: one uid (and the same gid) per running bot, far from any real account."""

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
KEPT_FROM_CALLER = ("SIXNIMMT_REFEREE", "SIXNIMMT_TOKEN")
REFEREE_SOCKET = "/referee.sock"
"""Where the bot finds the referee's socket inside its root (short: no socket path limit to mind)."""
PROJECT_PACKAGES = ("bot_sdk", "referee", "sixnimmt", "envs")
"""The project's packages a bot process imports (the SDK runner, the wire, the generated code, and
the RL environments' encodings, which a trained policy bot reads its view through: docs/envs.md);
with them, the package of every installed game (the ``sixnimmt.games`` entry points)."""
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level directories that are links into /usr on merged-/usr systems, bound when they are not."""
ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""As root, bwrap keeps only these for setpriv (drop to the bot's uid, empty the bounding set);
setpriv clears them all before the bot runs."""
INIT = ("/bin/sh", "-c", '"$@" & wait $!', "sixnimmt-init")
"""PID 1 of the bot's namespace: starts the bot, exits with its status (128 + N for signal N),
which takes every process left in the namespace with it. Not bwrap's own init, which waits for
all of them (a daemon would outlive the bot), and not the bot itself: bwrap's parent-death
signal reaches PID 1 only with the same uid as bwrap's monitor (root, whose capabilities are
gone), so a bot of another uid as PID 1 would outlive a launcher that dies."""
GATED_INIT = ("/bin/sh", "-c", 'read -r go && exec </dev/null && { "$@" & wait $!; }', "sixnimmt-init")
""":data:`INIT` that first waits for a line on its stdin: the launcher sends it once PID 1 is in
the bot's memory cgroup (:class:`_Gate`); without it (the launcher gone) the bot never starts."""
STOPPING = (signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
MISSING_TOOL = (
    "{tool} is not installed: the sandbox needs bubblewrap and util-linux "
    "(Debian: apt-get install bubblewrap util-linux); it never runs a bot unconfined"
)

_PROJECT = Path(__file__).resolve().parents[2]
"""The directory that holds the project's packages (workers/sandbox/__init__.py is two below it)."""


class SandboxError(RuntimeError):
    """The sandbox cannot start a bot with the protections it must have here."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one bot process; 0 means no limit."""

    cpu_s: int = 600
    """CPU seconds (user + system); the process is killed (SIGKILL) when it reaches them."""
    memory_mb: int = 1024
    """Address space (RLIMIT_AS): allocations beyond it fail (``MemoryError`` in Python); and, where
    a memory cgroup is available, the memory charged to the bot (resident, tmpfs, shared, page
    cache; no swap): over it the kernel kills a process of the bot."""
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
            settings = load_settings()
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
class Enforcement:
    """Which protections hold for bots started by a :class:`Sandbox` on this machine."""

    as_root: bool
    limits: bool
    """CPU time, address space, file size and process count."""
    private_dir: bool
    """A fresh working directory per bot (HOME, TMPDIR inside): a tmpfs of ``file_mb`` + 1 MB."""
    clean_env: bool
    """Only PATH, LANG, HOME, TMPDIR, PYTHONPATH (if needed) and the referee address and token."""
    separate_user: bool
    """A dedicated unprivileged uid/gid per bot (root only; otherwise the caller's own uid)."""
    network: bool
    """A network namespace without interfaces: no TCP, no abstract Unix sockets of the host."""
    pid_namespace: bool
    """The bot sees and signals only its own processes, which all die with it."""
    private_mounts: bool
    """A root of its own: only the allow-listed paths exist, and private /tmp and /dev/shm."""
    no_new_privs: bool
    """No capabilities, ``no_new_privs``: set-uid programs and file capabilities grant nothing."""
    seccomp: bool = True
    """The seccomp filter of :mod:`workers.sandbox.seccomp` (always: no sandbox starts without it)."""
    memory_cgroup: bool = False
    """A memory cgroup per bot (:mod:`workers.sandbox.cgroups`): memfd, tmpfs and shared memory count too."""
    notes: tuple[str, ...] = ()
    """What does not hold, and why."""

    def holding(self) -> list[str]:
        """The names of the protections that hold."""
        return [name for name, value in asdict(self).items() if value is True and name != "as_root"]


_PROBED: set[tuple[int, str]] = set()
"""(euid, bwrap) pairs a sandboxed Python has started with in this process."""
_PROBE_LOCK = threading.Lock()
_DEFAULT: Any = object()


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
        bots_in: Sequence[str | os.PathLike[str]] = (),
        expose: Sequence[str | os.PathLike[str]] = (),
        uids: range = DEFAULT_UIDS,
        stdout: int | IO[Any] | None = subprocess.DEVNULL,
        stderr: int | IO[Any] | None = None,
        bwrap: str | None = None,
    ) -> None:
        """``bots_in``: directories holding one directory per bot (a block's root): a bot whose
        file lies in one gets its whole directory ``root/NAME`` and nothing else of the root;
        otherwise it gets the directory of its file. ``expose``: more paths every bot may read.
        ``bwrap``: the bubblewrap binary (default: ``bwrap`` on PATH)."""
        self.limits = limits or Limits()
        self.workdir = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
        self.bots_in = tuple(os.path.realpath(p) for p in bots_in)
        self.expose = tuple(os.path.realpath(p) for p in expose)
        self.uids = uids
        self.stdout = stdout
        self.stderr = stderr
        self.tools = _tools(bwrap)
        _seccomp_filter()  # no filter here, no sandbox: fail now, not with the first bot
        self._running: weakref.WeakSet[SandboxedProcess] = weakref.WeakSet()

    # -- what holds ---------------------------------------------------------------------------

    def enforced(self) -> Enforcement:
        """Which protections hold here (a real sandboxed Python is started once per process)."""
        root = os.geteuid() == 0
        self._probe()
        notes = [] if root else ["not root: every bot runs as the calling user (in a user namespace)"]
        memory, why = cgroups.memory_cgroups()
        if memory is None:
            notes.append(f"{why}: only RLIMIT_AS bounds memory (memfd and tmpfs pages escape it)")
        elif not self.limits.memory_mb:
            notes.append("memory_mb is 0: no memory limit")
        return Enforcement(
            as_root=root,
            limits=True,
            private_dir=True,
            clean_env=True,
            separate_user=root,
            network=True,
            pid_namespace=True,
            private_mounts=True,
            no_new_privs=True,
            seccomp=True,
            memory_cgroup=memory is not None and self.limits.memory_mb > 0,
            notes=tuple(notes),
        )

    def _probe(self) -> None:
        """Start a sandboxed Python once; raise :class:`SandboxError` with bwrap's words if it fails."""
        key = (os.geteuid(), self.tools["bwrap"])
        with _PROBE_LOCK:
            if key not in _PROBED:
                argv = [sys.executable, "-c", "import os, sys; sys.stdout.write(str(os.getuid()))"]
                process = self._start(argv, {}, Limits(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                try:
                    out, err = process.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    out, err = process.communicate()
                if process.returncode != 0 or (os.geteuid() == 0 and out.strip() in (b"", b"0")):
                    said = err.decode(errors="replace").strip().splitlines()[-3:]
                    raise SandboxError(
                        f"a sandboxed Python does not start here ({process.exit_reason()}): "
                        + (" | ".join(said) or "no message")
                    )
                _PROBED.add(key)

    # -- launching ----------------------------------------------------------------------------

    def __call__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        stderr: int | IO[Any] | None = _DEFAULT,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SandboxedProcess:
        """Start ``argv`` sandboxed; of ``env`` only the referee address and token are kept.

        ``stderr`` overrides the sandbox's own (e.g. ``subprocess.PIPE`` to read the bot's errors).
        ``cwd``: a command bot's directory (``bot_sdk.command``), where it starts; it is bound
        read-only (``root/NAME`` when under a root of ``bots_in``), with its interpreter's install
        tree when that lies outside ``/usr``, and nothing its arguments name
        (:class:`~bot_sdk.command.CommandError` for a command that would need it). Without it the
        bot starts in its private directory.
        The first call in a process checks that a sandboxed Python starts here at all, so that a
        machine that cannot sandbox fails with :class:`SandboxError` instead of with every bot.
        """
        self._probe()
        return self._start(
            argv,
            env,
            self.limits,
            stdout=self.stdout,
            stderr=self.stderr if stderr is _DEFAULT else stderr,
            cwd=None if cwd is None else os.path.realpath(cwd),
        )

    def _start(
        self,
        argv: list[str],
        env: Mapping[str, str],
        limits: Limits,
        *,
        stdout: int | IO[Any] | None,
        stderr: int | IO[Any] | None,
        cwd: str | None = None,
    ) -> SandboxedProcess:
        # What the bot runs and which of its directories it gets, checked before anything is made.
        if cwd is None:
            argv, bot_dirs = _bot_files(argv, self.bots_in)
        else:
            argv, bot_dirs = _command(argv, cwd, self.bots_in)
        root = os.geteuid() == 0
        lease = _UidLease.acquire(self.uids) if root else None
        uid = lease.uid if lease else os.getuid()
        directory: Path | None = None
        cgroup: cgroups.BotCgroup | None = None
        gate: _Gate | None = None
        filter_fd = -1
        try:
            # On the host only the mount point of the bot's home (a tmpfs), owned by the bot.
            directory = Path(tempfile.mkdtemp(prefix="sixnimmt-bot-", dir=self.workdir))
            if root:
                os.chown(directory, uid, uid)
            environment = _environment(env, directory)
            binds = [(p, p, "ro") for p in _needed_paths()]
            binds += [(p, p, "ro") for p in [*bot_dirs, *self.expose]]
            # HOME is a size-capped tmpfs at the directory's path: no bot fills the worker's disk.
            binds.append(("", str(directory), "home"))
            referee = environment.get("SIXNIMMT_REFEREE", "")
            if referee:
                binds.append((_referee_socket(referee, root), REFEREE_SOCKET, "rw"))
                environment["SIXNIMMT_REFEREE"] = f"unix:{REFEREE_SOCKET}"
            memory, _ = cgroups.memory_cgroups()
            if memory is not None and limits.memory_mb:
                cgroup = memory.create(limits.memory_mb * MIB)
            filter_fd = seccomp.filter_fd()
            if cgroup is not None:
                gate = _Gate()
            command = [
                *_prlimit(self.tools["prlimit"], limits, root),
                *_bwrap(
                    self.tools["bwrap"],
                    root,
                    binds,
                    Path(cwd) if cwd else directory,
                    limits,
                    filter_fd,
                    gate.info_w if gate else None,
                ),
                *(GATED_INIT if gate else INIT),
                *(_setpriv(self.tools["setpriv"], uid) if root else [self.tools["setpriv"], "--nnp", "--"]),
                *argv,
            ]
            process = SandboxedProcess(
                command,
                env=environment,
                cwd=directory,
                stdin=gate.go_r if gate else subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                close_fds=True,
                pass_fds=(filter_fd, gate.info_w) if gate else (filter_fd,),
            )
            if gate is not None and cgroup is not None:
                try:
                    gate.admit(cgroup)
                except BaseException:
                    process.kill()
                    process.wait()
                    raise
        except BaseException:
            if directory is not None:
                _remove_tree(directory)
            if cgroup is not None:
                cgroup.remove()
            if lease:
                lease.release()
            raise
        finally:
            if filter_fd >= 0:
                os.close(filter_fd)
            if gate is not None:
                gate.close()
        process._attach(_Resources(directory, lease, cgroup), limits)
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
    """A sandboxed bot; waiting for it (``wait``, ``poll``, ``communicate``) releases its sandbox.

    The process is bwrap's monitor; its only child is PID 1 of the bot's namespace (:data:`INIT`),
    whose child is the bot. A bot killed by signal N comes back as status 128 + N;
    :attr:`returncode` gives it back as ``-N``, like :class:`subprocess.Popen` (so a bot that
    exits with 128 + N itself reads as killed by N). Every stopping signal (``terminate``,
    ``kill``) SIGKILLs the namespace's PID 1, which takes the bot and all its processes along.
    """

    _resources: _Resources | None = None
    _finalizer: weakref.finalize | None = None  # type: ignore[type-arg]
    _limits: Limits = Limits()
    _stopped_by: int | None = None
    rusage: Any = None
    """The resource usage of the bot and what it waited for (``os.wait4``), once it has exited."""

    @property
    def directory(self) -> Path | None:
        """The bot's private working directory (gone once the process has been waited for)."""
        return self._resources.directory if self._resources else None

    @property
    def uid(self) -> int | None:
        """The sandbox user's uid while the process holds it (root only)."""
        lease = self._resources.lease if self._resources else None
        return lease.uid if lease else None

    @property
    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) the bot used, once it has exited."""
        if self.rusage is None:
            return None
        return float(self.rusage.ru_utime + self.rusage.ru_stime)

    def exit_reason(self) -> str | None:
        """How the bot ended, in words: the limit that killed it when the sandbox knows.

        ``None`` while it runs. For example ``exited with status 1``, ``killed by SIGKILL: CPU
        time limit 600 s (RLIMIT_CPU) reached``, ``killed by SIGKILL: stopped by its launcher``.
        ``killed by SIGKILL: memory limit 1024 MB (cgroup) reached`` when the kernel's OOM killer
        took it for its memory cgroup. The address-space (``MemoryError``) and process (``EAGAIN``)
        limits fail calls instead of killing: the bot's stderr tells those; a system call of
        another architecture kills with SIGSYS (the seccomp filter).
        """
        code = self.returncode
        if code is None:
            return None
        if code >= 0:
            return f"exited with status {code}"
        number = -code
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if self._stopped_by is not None:
            return f"killed by {name}: stopped by its launcher"
        cpu = self.cpu_seconds
        limits = self._limits
        # RLIMIT_CPU counts per process; the rusage sums the bot and what it reaped. The kernel
        # kills slightly early by the rusage's count (0.05-0.15 s here), hence the slack.
        cpu_limit = limits.cpu_s and cpu is not None and cpu >= 0.98 * limits.cpu_s - 0.25
        if number in (signal.SIGKILL, signal.SIGXCPU) and cpu_limit:
            return f"killed by {name}: CPU time limit {limits.cpu_s} s (RLIMIT_CPU) reached"
        if number == signal.SIGXFSZ and limits.file_mb:
            return f"killed by SIGXFSZ: file size limit {limits.file_mb} MB (RLIMIT_FSIZE) reached"
        if number == signal.SIGKILL and self._resources is not None and self._resources.oom_kills:
            return f"killed by SIGKILL: memory limit {limits.memory_mb} MB (cgroup) reached"
        if number == signal.SIGSYS:
            return "killed by SIGSYS: a system call the seccomp filter kills for (another architecture's)"
        return f"killed by signal {number} ({name})"

    def _attach(self, resources: _Resources, limits: Limits) -> None:
        self._resources = resources
        self._limits = limits
        self._finalizer = weakref.finalize(self, resources.release)

    def send_signal(self, sig: int) -> None:
        """Signal the bot; a stopping signal SIGKILLs it (see the class docstring)."""
        self.poll()
        if self.returncode is not None:
            return
        stopping = sig in STOPPING
        if stopping:
            self._stopped_by = sig
        # PID 1 of the namespace is bwrap's child: killed, it is reaped by bwrap, which then
        # exits. Killing bwrap first would orphan it to the host's PID 1, which in some
        # containers never reaps.
        inside = _children(self.pid)
        for pid in inside:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if stopping else sig)
        if not inside and stopping:
            super().send_signal(signal.SIGKILL)  # still starting: bwrap takes the bot with it

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

    # Popen's waiting hooks, with os.wait4 instead of os.waitpid to keep the bot's rusage.

    def _wait4(self, pid: int, flags: int) -> tuple[int, int]:
        done, status, usage = os.wait4(pid, flags)
        if done:
            self.rusage = usage
        return done, status

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        try:
            return self._wait4(self.pid, wait_flags)
        except ChildProcessError:
            return self.pid, 0

    def _internal_poll(self, _deadstate: Any = None, _waitpid: Any = None, **kwargs: Any) -> int | None:
        code: int | None = super()._internal_poll(  # type: ignore[misc]
            _deadstate, _waitpid=self._wait4, **kwargs
        )
        return code

    def _handle_exitstatus(self, sts: int, *args: Any, **kwargs: Any) -> None:
        super()._handle_exitstatus(sts, *args, **kwargs)  # type: ignore[misc]
        code = self.returncode
        if os.WIFEXITED(sts) and code is not None and 128 < code < 128 + signal.NSIG:
            self.returncode = 128 - code


@dataclass(slots=True)
class _Resources:
    """What one bot holds: its directory, its uid, its memory cgroup; released once, after it has exited."""

    directory: Path | None
    lease: _UidLease | None
    cgroup: cgroups.BotCgroup | None = None
    released: bool = field(default=False)
    oom_kills: int = 0
    """Processes of the bot the OOM killer took for its cgroup's limit (read at release)."""

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self.directory is not None:
            _remove_tree(self.directory)
        if self.cgroup is not None:
            self.oom_kills = self.cgroup.oom_kills()
            self.cgroup.remove()
        if self.lease is not None:
            self.lease.release()


class _Gate:
    """Holds a bot back until PID 1 of its namespace is in its memory cgroup.

    bwrap reports PID 1's host pid on ``--info-fd`` right after creating it, and then builds the
    root; the launcher moves PID 1 into the cgroup meanwhile (a move waits for the kernel, an RCU
    grace period of ``cgroup_threadgroup_rwsem``, so overlapping it with bwrap's work keeps it off
    the start), then lets PID 1 go on (:data:`GATED_INIT`), which starts the bot inside. Nothing
    of the bot runs before; a PID 1 that is never let go exits without starting it.
    """

    def __init__(self) -> None:
        self.go_r, self.go_w = os.pipe()
        self.info_r, self.info_w = os.pipe()

    def admit(self, cgroup: cgroups.BotCgroup, timeout: float = 60.0) -> None:
        """Move PID 1 into ``cgroup`` and let it go on; returns early if bwrap ended before PID 1."""
        os.close(self.info_w)
        self.info_w = -1
        report = b""
        deadline = time.monotonic() + timeout
        while b"}" not in report:
            ready, _, _ = select.select([self.info_r], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise SandboxError(f"bwrap did not report its namespace within {timeout:.0f} s")
            chunk = os.read(self.info_r, 4096)
            if not chunk:
                return  # bwrap failed before PID 1 existed: its exit status and stderr tell why
            report += chunk
        cgroup.admit(int(json.loads(report)["child-pid"]))
        os.write(self.go_w, b"go\n")

    def close(self) -> None:
        for fd in (self.go_r, self.go_w, self.info_r, self.info_w):
            if fd >= 0:
                os.close(fd)
        self.go_r = self.go_w = self.info_r = self.info_w = -1


class _UidLease:
    """A sandbox uid held by this process: an abstract Unix socket named after it is bound.

    The socket goes when the launcher does, so a crashed launcher leaks nothing; every launcher
    in this network namespace sees every lease. A uid with live processes is never handed out.
    """

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


# -- the command line: prlimit, bwrap, setpriv ------------------------------------------------


def _tools(bwrap: str | None) -> dict[str, str]:
    """The absolute paths of bwrap, prlimit and setpriv, or a :class:`SandboxError` naming the missing one."""
    found = {}
    for tool, given in (("bwrap", bwrap), ("prlimit", None), ("setpriv", None)):
        path = shutil.which(given or tool)
        if path is None:
            raise SandboxError(MISSING_TOOL.format(tool=given or tool))
        found[tool] = os.path.realpath(path)
    return found


def _prlimit(prlimit: str, limits: Limits, root: bool) -> list[str]:
    values = limits.rlimits()
    if "RLIMIT_NPROC" in values and not root:
        # The count covers every process of the user, not only the bot's.
        values["RLIMIT_NPROC"] += _tasks_of(os.getuid())
    options = {"RLIMIT_CPU": "cpu", "RLIMIT_AS": "as", "RLIMIT_FSIZE": "fsize", "RLIMIT_NPROC": "nproc"}
    return [prlimit, *(f"--{options[k]}={v}:{v}" for k, v in values.items()), "--core=0:0", "--"]


def _bwrap(
    bwrap: str,
    root: bool,
    binds: list[tuple[str, str, str]],
    directory: Path,
    limits: Limits,
    filter_fd: int,
    info_fd: int | None = None,
) -> list[str]:
    """bwrap's options: namespaces, the allow-listed root, ``directory`` as the working directory,
    the seccomp filter read from ``filter_fd``, PID 1's pid reported on ``info_fd``.

    ``binds`` are ``(source, target, mode)``: mode ``ro`` or ``rw`` binds, ``home`` a tmpfs.
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL"]
    if root:
        # No user namespace: the bot's uid must be a real host uid (its own process count and
        # files), which setpriv switches to; --unshare-all would add one mapping only root.
        args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        for cap in ROOT_CAPS:
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-all", "--unshare-user", "--disable-userns"]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_LINKS:
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--perms", "0755", "--dir", "/etc", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    size = str(max(limits.file_mb, 1) * MIB)
    args += ["--size", size, "--perms", "1777", "--tmpfs", "/tmp"]
    args += ["--size", size, "--perms", "1777", "--tmpfs", "/dev/shm"]
    made = {"/", "/usr", "/etc", "/proc", "/dev", "/tmp", "/dev/shm"}
    bound: list[str] = ["/usr"]
    for source, target, mode in sorted(binds, key=lambda b: (b[1].count("/"), b[1])):
        if any(_under(target, b) for b in bound) and mode == "ro":
            continue  # already inside a read-only bind
        for parent in reversed(Path(target).parents):
            if str(parent) not in made:
                # bwrap would copy the host's modes (/root is 0700); the way down must be searchable.
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        if mode == "home":
            # Room for one file of the largest size the bot may write, and a little more.
            home = str((max(limits.file_mb, 1) + 1) * MIB)
            args += ["--size", home, "--perms", "1777", "--tmpfs", target]
            args += ["--perms", "1777", "--dir", f"{target}/tmp"]
        else:
            args += ["--ro-bind" if mode == "ro" else "--bind", source, target]
        made.add(target)
        bound.append(target)
    args += ["--seccomp", str(filter_fd), "--chdir", str(directory)]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    args.append("--")
    return args


def _setpriv(setpriv: str, uid: int) -> list[str]:
    """As root: drop to ``uid`` for good (real, effective and saved), no groups, no capabilities."""
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--nnp",
        "--",
    ]


# -- what a bot needs ----------------------------------------------------------------------------


def _bot_files(argv: list[str], bots_in: Sequence[str]) -> tuple[list[str], list[str]]:
    """``argv`` with its bot file specs (``x.py``, ``x.py:Class``) absolute, and the bot directories.

    The bot starts in its private directory, so a relative spec would not resolve. Its directory
    is the one holding the file, or ``root/NAME`` when the file lies under a root of ``bots_in``;
    with roots given, a file outside them is refused (a stored entry point is untrusted).
    """
    result, directories = [argv[0]], []
    for arg in argv[1:]:
        stem, sep, name = arg.partition(".py:")
        path = stem + ".py" if sep else arg
        if path.endswith(".py") and os.path.isfile(path):
            absolute = os.path.realpath(path)
            directory = _bot_directory(absolute, bots_in) if bots_in else os.path.dirname(absolute)
            directories.append(directory)
            arg = absolute + (f":{name}" if sep else "")
        result.append(arg)
    return result, directories


def _command(argv: list[str], cwd: str, bots_in: Sequence[str]) -> tuple[list[str], list[str]]:
    """A command bot's argv as it runs, and the directories to bind: its own and its interpreter's.

    Nothing of the command line is bound or resolved on the host: its program is an interpreter
    of :data:`bot_sdk.command.INTERPRETERS` (run by the real path of the worker's copy) or a
    path inside ``cwd``; the arguments are passed as they are (:func:`check_confined`, again:
    a stored ``bot.toml`` is untrusted). :class:`CommandError` for anything else.
    """
    check_confined(argv, cwd, f"the command {shlex.join(argv)!r}")
    directory = _bot_directory(cwd, bots_in) if bots_in else cwd
    if "/" in argv[0]:
        return argv, [directory]
    program, tree = _interpreter(argv[0], f"{os.environ.get('PATH', '')}{os.pathsep}{SAFE_PATH}")
    return [program, *argv[1:]], [directory, *tree]


def _bot_directory(path: str, bots_in: Sequence[str]) -> str:
    """``root/NAME`` for a path under ``root/NAME`` of a root of ``bots_in``; else refused."""
    for root in bots_in:
        if _under(path, root) and path != root:
            return os.path.join(root, os.path.relpath(path, root).split(os.sep)[0])
    raise CommandError(f"{path} is outside the directories the sandbox runs bots from")


@functools.lru_cache(maxsize=64)
def _interpreter(name: str, search: str) -> tuple[str, tuple[str, ...]]:
    """The real path of interpreter ``name`` on this worker, and what to bind with it.

    ``python`` and ``python3`` are the worker's own Python (bound already, its SDK importable).
    Others: the first executable file on ``search`` that is a program (ELF), not a wrapper script
    such as a pyenv shim, which would need more of the host than its file. Its install tree
    (``PREFIX`` of ``PREFIX/bin/NAME``) is bound when it lies outside ``/usr``, never ``/`` or a
    home directory; a tree of its own (a JDK, even under ``/usr``) also gets the directories its
    links lead to outside it (Debian's JDK reads ``/etc/java-17-openjdk``), read-only.
    """
    if name in ("python", "python3"):
        return sys.executable, ()
    for folder in search.split(os.pathsep):
        candidate = os.path.join(folder, name)
        if not folder or not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
            continue
        real = os.path.realpath(candidate)
        if not _is_program(real):
            continue
        home = os.path.dirname(real)
        tree = os.path.dirname(home) if os.path.basename(home) == "bin" else home
        if tree in ("/usr", "/usr/local", "/"):
            return real, ()
        if not _under(tree, "/usr") and (tree.count("/") < 2 or tree in _home_directories()):
            raise SandboxError(
                f"the interpreter {name} ({real}) would need all of {tree} bound: install it"
                " under /usr or in a directory of its own"
            )
        binds = [] if _under(tree, "/usr") else [tree]
        return real, (*binds, *_linked_from(tree))
    raise CommandError(f"no interpreter {name!r} on this worker")


def _linked_from(tree: str) -> list[str]:
    """The directories outside ``tree`` and ``/usr`` that its links lead to (no home, nothing top-level)."""
    found: set[str] = set()
    homes = _home_directories()
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                continue
            target = os.path.realpath(path)
            directory = target if os.path.isdir(target) else os.path.dirname(target)
            if (
                os.path.exists(target)
                and not _under(directory, tree)
                and not _under(directory, "/usr")
                and directory.count("/") >= 2
                and not any(_under(directory, home) for home in homes)
            ):
                found.add(directory)
    return sorted(p for p in found if not any(q != p and _under(p, q) for q in found))


def _is_program(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _home_directories() -> set[str]:
    homes = {entry.pw_dir.rstrip("/") for entry in pwd.getpwall()} | {os.path.expanduser("~").rstrip("/")}
    return {home for home in homes if home}  # "/" (a daemon's home) is no home to exclude


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


@functools.cache
def _project_installed() -> bool:
    """Whether this interpreter imports the project without help (an editable or real install)."""
    try:
        metadata.distribution("sixnimmt-arena")
    except metadata.PackageNotFoundError:
        return False
    return True


@functools.cache
def _needed_paths() -> list[str]:
    """What the bot's Python reads: the interpreter, its prefixes and the project's packages."""
    paths = {
        os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))

    games = {point.module.partition(".")[0] for point in metadata.entry_points(group="sixnimmt.games")}
    for package in (*PROJECT_PACKAGES, *sorted(games)):
        own = _PROJECT / package
        if (own / "__init__.py").is_file():
            # The project's own package, not what find_spec names: under pytest (pythonpath = tests) with
            # an editable install's finder, tests/referee is a namespace package that stands before it.
            paths.add(os.path.realpath(own))
            continue
        spec = import_util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            paths.add(os.path.realpath(location))
    # Nested paths come with their parent.
    return sorted(p for p in paths if not any(q != p and _under(p, q) for q in paths))


def _referee_socket(address: str, root: bool) -> str:
    """The host path of the referee's Unix socket, connectable by the bot's user."""
    if address.startswith("unix://"):
        path = address[len("unix://") :]
    elif address.startswith("unix:"):
        path = os.path.abspath(address[len("unix:") :])
    else:
        raise SandboxError(
            f"the referee listens on {address!r}, which a bot without network cannot reach: "
            "serve it on a Unix socket (unix:/path)"
        )
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SandboxError(f"no referee socket at {path}: {exc}") from None
    if not stat.S_ISSOCK(mode):
        raise SandboxError(f"the referee address {path} is not a socket")
    if root and mode & 0o006 != 0o006:
        os.chmod(path, stat.S_IMODE(mode) | 0o006)  # connect() needs write permission
    return os.path.realpath(path)


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# -- processes and files ------------------------------------------------------------------------


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
    """Live (non-zombie) processes of ``uid``.

    ``/proc/PID`` belongs to a process's effective uid; a sandboxed bot cannot change its uids
    (setpriv set all three, and it holds no capability), so a stat of each is enough."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z":
            found.append(int(name))
    return found


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


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


def _seccomp_filter() -> bytes:
    """The seccomp filter's program; :class:`SandboxError` where it cannot be built."""
    try:
        return seccomp.filter_bpf()
    except seccomp.SeccompUnavailable as exc:
        raise SandboxError(f"{exc}; the sandbox never runs a bot without its seccomp filter") from None


def sandbox_for(directory: Path) -> Sandbox:
    """The launcher that confines bots whose directories (``directory/NAME``) are under ``directory``,
    with the limits of the settings.

    Each bot sees its own directory only, read-only; the referee socket is bound in by itself.
    """
    return Sandbox(Limits.from_settings(), bots_in=[directory])
