"""The bot sandbox, shown with real processes: one test per limit and per protection.

Each test starts ``tests/workers/sandbox_bots/probe.py`` (a deliberately misbehaving bot) in
a :class:`~workers.sandbox.Sandbox` and reads back what it could and could not do; where a
protection could silently do nothing, the same probe first succeeds outside the sandbox. The
last test plays a full game with a reference bot sandboxed under a real referee. Nothing skips
for want of bubblewrap: without ``bwrap`` the sandbox refuses, and these tests fail.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.matches import MatchPlan, local_referee, play_matches
from referee.settings import load as load_settings
from workers.sandbox import Limits, Sandbox, SandboxedProcess, SandboxError

PROBE = str(Path(__file__).resolve().parent / "sandbox_bots" / "probe.py")
PROJECT = Path(__file__).resolve().parents[2]
ROOT = os.geteuid() == 0


USED_UIDS: set[int] = set()
"""The sandbox uids the current test's bots ran as."""


class TrackedSandbox(Sandbox):
    """A :class:`Sandbox` noting the uid of each bot it starts, to look for leftovers."""

    def __call__(self, argv: list[str], env: dict[str, str], **kwargs: Any) -> SandboxedProcess:
        process = super().__call__(argv, env, **kwargs)
        if process.uid is not None:
            USED_UIDS.add(process.uid)
        return process


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _processes_of(uids: set[int]) -> list[int]:
    """Processes (zombies included) owned by one of ``uids``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                owner = os.stat(f"/proc/{name}").st_uid
            except OSError:
                continue
            if owner in uids:
                found.append(int(name))
    return found


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """The base of the bots' private directories; empty again, and no bot left, after each test."""
    base = tmp_path / "bots"
    base.mkdir()
    USED_UIDS.clear()
    yield base
    assert list(base.iterdir()) == [], "a bot's private directory was left behind"
    assert _processes_of(USED_UIDS) == [], "a sandboxed process was left behind"


def sandbox(workdir: Path, limits: Limits | None = None, **options: Any) -> Sandbox:
    return TrackedSandbox(
        limits or Limits(), workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options
    )


def run_probe(
    box: Sandbox, *args: str, env: dict[str, str] | None = None, timeout: float = 20
) -> tuple[SandboxedProcess, Any, str]:
    """Run the probe to its end: the process, its last JSON line and its stderr."""
    process = box([sys.executable, PROBE, *args], env or {})
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # and wait: the sandbox is released, so the failure is the test's only
        process.communicate()
        raise
    lines = out.decode().splitlines()
    return process, json.loads(lines[-1]) if lines else None, err.decode()


def probe_outside(*args: str) -> Any:
    """Run the probe unconfined, as root: what the sandbox must take away."""
    done = subprocess.run([sys.executable, PROBE, *args], capture_output=True, check=True, timeout=60)
    return json.loads(done.stdout.decode().splitlines()[-1])


def host_unix_sockets() -> list[str]:
    """Every Unix socket address of this network namespace: paths, and ``@name`` for abstract ones."""
    found = []
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7] not in found:
            found.append(fields[7])
    return found


def test_what_is_enforced_here_is_reported(workdir: Path) -> None:
    enforced = sandbox(workdir).enforced()
    assert enforced.limits and enforced.private_dir and enforced.clean_env
    assert enforced.network and enforced.pid_namespace and enforced.private_mounts and enforced.no_new_privs
    assert enforced.as_root is ROOT
    assert enforced.separate_user is ROOT
    print("enforced here:", ", ".join(enforced.holding()), "|", "; ".join(enforced.notes))


def test_without_bubblewrap_the_sandbox_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Never a bot unconfined: a missing bwrap is an error that says what to install.
    with pytest.raises(SandboxError, match="bubblewrap"):
        Sandbox(bwrap=str(tmp_path / "no-bwrap-here"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError, match=r"bwrap is not installed.*apt-get install bubblewrap"):
        Sandbox()


def test_bot_submit_without_bubblewrap_says_so_in_one_line(tmp_path: Path) -> None:
    bot = tmp_path / "low.py"
    bot.write_text("from bot_sdk import ClassicBot\n\nclass Low(ClassicBot):\n    def choose_card(self, v):\n"
                   "        return min(v.hand)\n")  # fmt: skip
    store = tmp_path / "store.db"
    env = {**os.environ, "PATH": str(tmp_path), "SIXNIMMT_DATABASE_URL": f"sqlite:///{store}"}
    done = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "bot", "submit", str(bot), "--name", "low"],
        capture_output=True, text=True, env=env, timeout=120, cwd=PROJECT,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "bwrap is not installed" in done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "bot", "list", "--json"],
        capture_output=True, text=True, env=env, timeout=120, cwd=PROJECT,
    )  # fmt: skip
    assert not store.exists()  # nothing stored: not even an empty store
    assert listed.returncode == 2 and f"no store at {store}" in listed.stderr


def test_a_machine_that_cannot_sandbox_refuses_at_the_first_bot(workdir: Path) -> None:
    # bwrap present but refused by the kernel (no namespaces, missing capabilities): one clear
    # error at the first launch, with bwrap's own words, rather than every bot dying alone.
    fake = workdir.parent / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    box = sandbox(workdir, bwrap=str(fake))
    with pytest.raises(SandboxError, match=r"does not start here .*No permissions to creating new namespace"):
        box([sys.executable, PROBE, "env"], {})


def test_limits_come_from_the_settings() -> None:
    settings = load_settings(
        {
            "SIXNIMMT_SANDBOX_CPU_S": "7",
            "SIXNIMMT_SANDBOX_MEMORY_MB": "300",
            "SIXNIMMT_SANDBOX_FILE_MB": "2",
            "SIXNIMMT_SANDBOX_PROCESSES": "9",
        }
    )
    assert Limits.from_settings(settings) == Limits(cpu_s=7, memory_mb=300, file_mb=2, processes=9)
    assert Limits.from_settings(load_settings({})) == Limits()
    with pytest.raises(ValueError, match="cpu_s"):
        Limits(cpu_s=-1)


# -- one test per limit --------------------------------------------------------------------------


def test_cpu_time_is_limited(workdir: Path) -> None:
    started = time.monotonic()
    process = sandbox(workdir, Limits(cpu_s=1))([sys.executable, PROBE, "cpu"], {})
    out, _ = process.communicate(timeout=20)
    assert process.returncode in (-signal.SIGKILL, -signal.SIGXCPU)
    assert time.monotonic() - started < 15
    # The probe printed its CPU time every 50 ms until it was killed: it never got past 1 s.
    used = [float(line) for line in out.decode().split()]
    assert 0.5 < used[-1] <= 1.0, used[-3:]
    assert process.exit_reason() == "killed by SIGKILL: CPU time limit 1 s (RLIMIT_CPU) reached"
    assert process.cpu_seconds is not None and used[-1] <= process.cpu_seconds < 1.2


def test_memory_is_limited(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir, Limits(memory_mb=256)), "memory", "64", "512")
    assert process.returncode == 0, err
    assert result == {"small": "ok", "big": "MemoryError"}


def test_file_size_is_limited(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir, Limits(file_mb=1)), "write", "1")
    assert process.returncode == 0, err
    # Python ignores SIGXFSZ, so the write past the limit fails with EFBIG.
    assert result == {"size": 1 << 20, "past_limit": "EFBIG"}


def test_a_bot_cannot_fill_the_disk(workdir: Path) -> None:
    # Many files, each under the file size limit: the bot's home is a tmpfs of file_mb + 1 MB,
    # not the worker's disk.
    process, result, err = run_probe(sandbox(workdir, Limits(file_mb=2)), "fill")
    assert process.returncode == 0, err
    assert result == {"written_mb": 2 + 1, "then": "ENOSPC"}


def test_process_count_is_limited(workdir: Path) -> None:
    box = sandbox(workdir, Limits(processes=8))
    process, result, err = run_probe(box, "fork")
    assert process.returncode == 0, err
    assert result["then"] == "EAGAIN"
    if box.enforced().separate_user:
        # The sandbox user runs nothing else: the probe itself plus 7 children.
        assert result["forked"] == 7
    else:
        assert result["forked"] < 8


# -- isolation -------------------------------------------------------------------------------------


def test_each_bot_gets_a_private_directory_removed_afterwards(workdir: Path) -> None:
    box = sandbox(workdir)
    first = box([sys.executable, PROBE, "whereami"], {})
    second = box([sys.executable, PROBE, "whereami"], {})
    directory = first.directory
    assert directory is not None and directory.parent == workdir and directory.is_dir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    if ROOT:
        assert directory.stat().st_uid == first.uid != second.uid
    outputs = [json.loads(p.communicate(timeout=20)[0].decode().splitlines()[-1]) for p in (first, second)]
    seen = outputs[0]
    assert seen["cwd"] == seen["home"] == str(directory)
    assert seen["tmpdir"] == seen["gettempdir"] == str(directory / "tmp")
    assert seen["listing"] == ["mine.txt", "tmp"]
    assert outputs[1]["cwd"] != seen["cwd"]
    # /tmp is a private tmpfs holding only the way down to the bot's own directory, and to
    # what the bot must run (the project and its virtualenv, wherever a checkout lives).
    needed = [str(directory), str(Path(__file__).resolve().parents[2]), sys.prefix]
    assert all(any(_under(p, f"/tmp/{entry}") for p in needed) for entry in seen["tmp"]), seen["tmp"]
    assert not directory.exists() and first.directory is not None


def test_a_bot_file_is_found_from_its_private_directory(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative spec, in a directory under /tmp (private in the sandbox) and under pytest's
    # 0700 directories: the sandbox makes it absolute and binds its directory back.
    files = tmp_path / "botfiles"
    files.mkdir(mode=0o755)
    files.chmod(0o755)
    (files / "hello.py").write_text("import os, json; print(json.dumps(os.getcwd()))")
    (files / "hello.py").chmod(0o644)
    monkeypatch.chdir(files)
    box = sandbox(workdir)
    process = box([sys.executable, "hello.py"], {})
    out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err.decode()
    assert json.loads(out) == str(process.directory)


def test_the_environment_is_scrubbed(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret_name, secret_value = f"SECRET_{secrets.token_hex(4).upper()}", secrets.token_hex(16)
    monkeypatch.setenv("SIXNIMMT_DATABASE_URL", "postgresql://league:hunter2@127.0.0.1/league")
    monkeypatch.setenv("SIXNIMMT_BROKER_URL", "redis://:hunter2@127.0.0.1:6379/0")
    monkeypatch.setenv(secret_name, secret_value)
    listener = socket.socket(socket.AF_UNIX)
    path = workdir.parent / "referee.sock"
    listener.bind(str(path))
    try:
        # What spawn_bot passes: the whole environment plus the referee and the token.
        env = {**os.environ, "SIXNIMMT_REFEREE": f"unix:{path}", "SIXNIMMT_TOKEN": "t0k3n"}
        process, seen, err = run_probe(sandbox(workdir), "env", env=env)
    finally:
        listener.close()
    assert process.returncode == 0, err
    # PWD: bwrap's, the bot's own working directory.
    allowed = {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONPATH", "PWD", "SIXNIMMT_REFEREE", "SIXNIMMT_TOKEN"}
    assert set(seen) <= allowed, set(seen) - allowed
    assert "SIXNIMMT_DATABASE_URL" not in seen and "SIXNIMMT_BROKER_URL" not in seen
    assert secret_name not in seen
    assert not any("hunter2" in v or secret_value in v for v in seen.values())
    assert seen["SIXNIMMT_TOKEN"] == "t0k3n"
    # The socket, bound into the bot's root at a short fixed path.
    assert seen["SIXNIMMT_REFEREE"] == "unix:/referee.sock"


@pytest.mark.skipif(
    not ROOT, reason="only root can run the bot as another user; as a user it reads what you read"
)
def test_the_store_is_unreadable(workdir: Path) -> None:
    store_dir = Path(tempfile.mkdtemp(prefix="sixnimmt-store-"))
    try:
        os.chmod(store_dir, 0o755)
        store, control = store_dir / "league.db", store_dir / "public.txt"
        store.write_text("the league's secrets")
        control.write_text("anyone may read this")
        os.chmod(store, 0o600)
        os.chmod(control, 0o644)
        # Not listed: not there at all, whatever its mode.
        process, result, err = run_probe(sandbox(workdir), "read", str(store), str(control), "/root/.bashrc")
        assert process.returncode == 0, err
        assert result == dict.fromkeys([str(store), str(control), "/root/.bashrc"], "FileNotFoundError")
        # Exposed on purpose: then only the file's mode stands between the bot and the store.
        process, result, err = run_probe(
            sandbox(workdir, expose=[store_dir]), "read", str(store), str(control)
        )
        assert process.returncode == 0, err
        assert result[str(control)] == "anyone may read this"
        assert result[str(store)] == "PermissionError"
    finally:
        for path in store_dir.iterdir():
            path.unlink()
        store_dir.rmdir()


def test_the_root_holds_only_the_allow_list(workdir: Path) -> None:
    box = sandbox(workdir)
    tops = ["/", "/etc", "/root", "/home", "/run", "/var", "/var/run", "/mnt", "/srv", "/opt", "/boot"]
    outside = probe_outside("listdir", *tops)
    assert outside["/run"] != "FileNotFoundError" and "passwd" in outside["/etc"]  # there is much to hide
    process, inside, err = run_probe(box, "listdir", *tops)
    assert process.returncode == 0, err
    expected_top = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp"}
    expected_top |= {Path(p).parts[1] for p in (sys.prefix, sys.base_prefix, str(workdir), PROJECT)}
    assert set(inside["/"]) <= expected_top, set(inside["/"]) - expected_top
    assert inside["/etc"] == ["ld.so.cache"]
    for gone in ("/home", "/run", "/var", "/var/run", "/mnt", "/srv", "/opt", "/boot"):
        assert inside[gone] == "FileNotFoundError", (gone, inside[gone])
    # Of /root only the way down to the interpreter, if it lives there (pyenv).
    assert inside["/root"] == "FileNotFoundError" or all(
        any(_under(p, f"/root/{e}") for p in (sys.base_prefix, sys.prefix)) for e in inside["/root"]
    ), inside["/root"]
    # The whole visible tree, /usr and the interpreter aside (allowed whole, so not walked: they
    # are most of the files, and listing them took over 20 s on a loaded machine): the bot's
    # directory and the project.
    wholesale = ["/usr", sys.prefix, sys.base_prefix]
    process, files, err = run_probe(box, "files", "/", *wholesale, timeout=120)
    assert process.returncode == 0, err
    bot_dir = os.path.dirname(PROBE)  # the bot's own files
    allowed = [*wholesale, "/etc/ld.so.cache", "/dev", str(workdir), bot_dir]
    allowed += [str(PROJECT / p) for p in ("bot_sdk", "referee", "games", "sixnimmt", "envs")]
    allowed += [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)]
    stray = [f for f in files if not any(_under(f, a) for a in allowed)]
    assert stray == [], stray[:20]
    # Of the project, the SDK, the referee, the installed games and the generated code (and venv)
    # only: not the league, the tests, the store or .git.
    kept = [str(PROJECT / d) for d in ("bot_sdk", "referee", "games", "sixnimmt", "envs", ".venv")]
    kept.append(bot_dir)
    assert [f for f in files if _under(f, str(PROJECT)) and not any(_under(f, k) for k in kept)] == []
    assert str(PROJECT / "bot_sdk" / "run.py") in files


def test_no_host_unix_socket_is_reachable(workdir: Path, tmp_path: Path) -> None:
    # Sockets the probe can surely reach from outside: a filesystem one in an open directory and
    # an abstract one, so that every refusal inside is the sandbox's doing.
    open_dir = Path(tempfile.mkdtemp(prefix="sixnimmt-sockets-"))
    open_dir.chmod(0o777)
    ours = open_dir / "open.sock"
    listeners = [socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)]
    abstract = f"@sixnimmt-test-{secrets.token_hex(4)}"
    referee = tmp_path / "referee" / "r.sock"
    referee.parent.mkdir(mode=0o700)
    try:
        listeners[0].bind(str(ours))
        ours.chmod(0o777)
        listeners[1].bind("\0" + abstract[1:])
        listeners[2].bind(str(referee))
        for listener in listeners:
            listener.listen(64)
        addresses = host_unix_sockets()
        assert str(ours) in addresses and abstract in addresses and str(referee) in addresses
        outside = probe_outside("unix", *addresses)
        assert outside[str(ours)] == outside[abstract] == "connected"
        box = sandbox(workdir)
        process, inside, err = run_probe(
            box, "unix", *addresses, "/referee.sock", env={"SIXNIMMT_REFEREE": f"unix:{referee}"}
        )
    finally:
        for listener in listeners:
            listener.close()
        ours.unlink(missing_ok=True)
        open_dir.rmdir()
    assert process.returncode == 0, err
    print(
        f"{len(addresses)} host sockets tried, e.g.", sorted(addresses)[:6], "→", sorted(set(inside.values()))
    )
    assert inside.pop("/referee.sock") == "connected"  # the one way out
    # The postgres, mysql, lease and our own sockets alike: no such file (not in the root) or
    # connection refused (abstract: the network namespace has its own abstract namespace).
    assert all(result in ("ENOENT", "ECONNREFUSED") for result in inside.values()), inside


def test_postgresql_is_unreachable(workdir: Path) -> None:
    pg_socket = "/var/run/postgresql/.s.PGSQL.5432"
    outside = probe_outside("unix", pg_socket)
    if outside[pg_socket] != "connected":
        pytest.fail(f"PostgreSQL does not listen on {pg_socket} here: {outside}")
    box = sandbox(workdir)
    process, by_socket, err = run_probe(box, "unix", pg_socket, "/run/postgresql/.s.PGSQL.5432")
    assert process.returncode == 0, err
    assert set(by_socket.values()) == {"ENOENT"}, by_socket
    process, by_tcp, err = run_probe(box, "connect", "127.0.0.1:5432", "localhost:5432")
    assert process.returncode == 0, err
    assert all(result != "connected" for result in by_tcp.values()), by_tcp


@pytest.mark.skipif(not ROOT, reason="bots of one user share it")
def test_a_bot_reads_no_other_bots_files(workdir: Path, tmp_path: Path) -> None:
    # A block's layout (workers.play.execute): a private root, one directory per bot.
    block = tmp_path / "block"
    block.mkdir(mode=0o700)
    secrets_of = {}
    for n in range(3):
        bot = block / f"bot{n}"
        bot.mkdir()
        (bot / "main.py").write_text(Path(PROBE).read_text())
        (bot / "secret.txt").write_text(f"strategy of bot {n}")
        for path in (bot, bot / "main.py", bot / "secret.txt"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        secrets_of[n] = str(bot / "secret.txt")
    (block / "referee.sock").write_text("")  # the block root's other tenant
    box = sandbox(workdir, bots_in=[block])
    for n in range(3):
        rivals = [p for m, p in secrets_of.items() if m != n]
        process = box(
            [sys.executable, str(block / f"bot{n}" / "main.py"), "read", secrets_of[n], *rivals], {}
        )
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, err.decode()
        result = json.loads(out)
        assert result[secrets_of[n]] == f"strategy of bot {n}"  # its own, yes
        assert all(result[p] == "FileNotFoundError" for p in rivals), result
        process = box([sys.executable, str(block / f"bot{n}" / "main.py"), "files", str(block)], {})
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, err.decode()
        assert json.loads(out) == sorted(str(block / f"bot{n}" / f) for f in ("main.py", "secret.txt"))


@pytest.mark.parametrize("base", ["tmp", "shm"])
def test_the_referee_socket_is_reachable(workdir: Path, tmp_path: Path, base: str) -> None:
    # The socket sits in a 0700 directory of root's, the bots' directories anywhere (/dev/shm:
    # another file system); the bot gets the socket bound at /referee.sock.
    if base == "shm":
        if not os.path.isdir("/dev/shm"):
            pytest.skip("no /dev/shm here")
        bots = Path(tempfile.mkdtemp(prefix="sixnimmt-test-", dir="/dev/shm"))
    else:
        bots = workdir
    private = tmp_path / "referee"
    private.mkdir(mode=0o700)
    path = private / "r.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(10)
    try:
        box = sandbox(bots)
        process = box([sys.executable, PROBE, "referee"], {"SIXNIMMT_REFEREE": f"unix:{path}"})
        conn, _ = listener.accept()
        with conn:
            assert conn.recv(5) == b"hello"
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, err.decode()
        assert json.loads(out) == {"address": "/referee.sock", "outcome": "connected"}
    finally:
        listener.close()
        if base == "shm":
            assert list(bots.iterdir()) == []
            bots.rmdir()


def test_there_is_no_network(workdir: Path) -> None:
    box = sandbox(workdir)
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        own = f"127.0.0.1:{listener.getsockname()[1]}"
        targets = [own, "127.0.0.1:5432", "127.0.0.1:6379"]  # ours, PostgreSQL, Redis
        assert probe_outside("connect", *targets)[own] == "connected"  # the probe does connect when it may
        process, inside, err = run_probe(box, "connect", *targets)
    finally:
        listener.close()
    assert process.returncode == 0, err
    assert all(result != "connected" for result in inside.values()), inside
    assert inside[own] in ("ENETUNREACH", "ECONNREFUSED", "EHOSTUNREACH")


def test_a_tcp_referee_is_refused(workdir: Path) -> None:
    with pytest.raises(SandboxError, match="Unix socket"):
        sandbox(workdir)([sys.executable, PROBE, "env"], {"SIXNIMMT_REFEREE": "127.0.0.1:50051"})


def test_no_process_outlives_its_bot(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir), "daemon")
    assert process.returncode == 0, err
    if ROOT:
        # The detached grandchild (setsid, ignoring SIGTERM) is gone with the bot.
        time.sleep(0.1)
        assert _processes_of({result["uid"]}) == []


def test_a_bot_dies_with_its_launcher(workdir: Path) -> None:
    # kill -9 of the worker: bwrap's monitor dies with it, and takes the bot's namespace along.
    launcher = (
        "import subprocess, sys, time\n"
        "from workers.sandbox import Sandbox\n"
        f"box = Sandbox(workdir={str(workdir)!r}, stdout=subprocess.PIPE)\n"
        f"bot = box([sys.executable, {PROBE!r}, 'linger'], {{}})\n"
        "print(bot.stdout.readline().decode(), flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, cwd=PROJECT) as parent:
        assert parent.stdout is not None
        seen = json.loads(parent.stdout.readline())
        assert _processes_of({seen["uid"]}) != []  # lingering
        parent.kill()
    deadline = time.monotonic() + 5
    while _processes_of({seen["uid"]}) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_of({seen["uid"]}) == []
    shutil.rmtree(seen["cwd"], ignore_errors=True)  # its launcher could not clean up


def test_terminate_and_close_stop_a_running_bot(workdir: Path) -> None:
    box = sandbox(workdir)
    first = box([sys.executable, PROBE, "sleep"], {})
    second = box([sys.executable, PROBE, "sleep"], {})
    for process in (first, second):
        assert process.stdout is not None
        assert json.loads(process.stdout.readline()) == "sleeping"
    # Stopping is SIGKILL for the namespace's PID 1, which takes the bot along.
    first.terminate()
    assert first.wait(5) == -signal.SIGKILL
    assert first.exit_reason() == "killed by SIGKILL: stopped by its launcher"
    box.close()
    assert second.returncode == -signal.SIGKILL
    for process in (first, second):
        assert process.stdout is not None
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()


@pytest.mark.parametrize(
    ("args", "returncode", "reason"),
    [
        (["status", "3"], 3, "exited with status 3"),
        (["status", "0"], 0, "exited with status 0"),
        (["segfault"], -signal.SIGSEGV, "killed by signal 11 (SIGSEGV)"),
    ],
)
def test_exit_reasons(workdir: Path, args: list[str], returncode: int, reason: str) -> None:
    process, _, _ = run_probe(sandbox(workdir), *args)
    assert process.returncode == returncode
    assert process.exit_reason() == reason


def test_stderr_can_be_piped_per_launch(workdir: Path) -> None:
    # What spawn_bot asks for to keep a bot's errors: the launcher's own default is overridden.
    box = TrackedSandbox(Limits(), workdir, stdout=subprocess.PIPE)
    process = box([sys.executable, PROBE, "stderr"], {}, stderr=subprocess.PIPE)
    out, err = process.communicate(timeout=20)
    assert json.loads(out) == "done" and err == b"the bot's own words\n"
    assert process.exit_reason() == "exited with status 0"


# -- end to end ----------------------------------------------------------------------------------


def test_a_sandboxed_reference_bot_plays_a_full_game(workdir: Path) -> None:
    box = TrackedSandbox(Limits.from_settings(), workdir)
    with local_referee() as client:
        run = play_matches(
            {"a": "random", "b": "random"},
            [MatchPlan(("a", "b", "a"), 2024)],
            config={"players": 3},
            client=client,
            launch=box,
        )
    assert run.exit_codes == {"a": 0, "b": 0}
    (match,) = run.matches
    assert match.status == "finished", match.error
    assert match.transcript["outcome"]["termination"] == "target_reached"
    for seat in match.seats:
        assert seat.faults == {} and seat.defaulted == 0 and not seat.forfeited
        assert seat.decisions > 0
