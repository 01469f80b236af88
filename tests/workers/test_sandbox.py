"""The bot sandbox, shown with real processes: one test per limit and per protection.

Each test starts ``tests/workers/sandbox_bots/probe.py`` (a deliberately misbehaving bot) in
a :class:`~workers.sandbox.Sandbox` and reads back what it could and could not do. The last
test plays a full game with a reference bot sandboxed under a real referee.
"""

from __future__ import annotations

import json
import os
import secrets
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

from bot_sdk.remote import MatchPlan, local_referee, play_remote
from referee.settings import load as load_settings
from workers.sandbox import Limits, Sandbox, SandboxedProcess, SandboxError

PROBE = str(Path(__file__).resolve().parent / "sandbox_bots" / "probe.py")
ROOT = os.geteuid() == 0


USED_UIDS: set[int] = set()
"""The sandbox uids the current test's bots ran as."""


class TrackedSandbox(Sandbox):
    """A :class:`Sandbox` noting the uid of each bot it starts, to look for leftovers."""

    def __call__(self, argv: list[str], env: dict[str, str]) -> SandboxedProcess:
        process = super().__call__(argv, env)
        if process.uid is not None:
            USED_UIDS.add(process.uid)
        return process


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
    out, err = process.communicate(timeout=timeout)
    lines = out.decode().splitlines()
    return process, json.loads(lines[-1]) if lines else None, err.decode()


def test_what_is_enforced_here_is_reported(workdir: Path) -> None:
    enforced = sandbox(workdir).enforced()
    assert enforced.limits and enforced.private_dir and enforced.clean_env
    assert enforced.as_root is ROOT
    assert enforced.separate_user is ROOT
    print("enforced here:", ", ".join(enforced.holding()), "|", "; ".join(enforced.notes))


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


def test_memory_is_limited(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir, Limits(memory_mb=256)), "memory", "64", "512")
    assert process.returncode == 0, err
    assert result == {"small": "ok", "big": "MemoryError"}


def test_file_size_is_limited(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir, Limits(file_mb=1)), "write", "1")
    assert process.returncode == 0, err
    # Python ignores SIGXFSZ, so the write past the limit fails with EFBIG.
    assert result == {"size": 1 << 20, "past_limit": "EFBIG"}


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
    if box.enforced().private_mounts:
        # /tmp is a private tmpfs holding only the way down to the bot's own directory, and to
        # what the bot must run (the project and its virtualenv, wherever a checkout lives).
        needed = [str(directory), str(Path(__file__).resolve().parents[2]), sys.prefix]
        assert all(any(p.startswith(f"/tmp/{entry}/") for p in needed) for entry in seen["tmp"]), seen["tmp"]
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
    allowed = {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONPATH", "SIXNIMMT_REFEREE", "SIXNIMMT_TOKEN"}
    assert set(seen) <= allowed, set(seen) - allowed
    assert "SIXNIMMT_DATABASE_URL" not in seen and "SIXNIMMT_BROKER_URL" not in seen
    assert secret_name not in seen
    assert not any("hunter2" in v or secret_value in v for v in seen.values())
    assert seen["SIXNIMMT_TOKEN"] == "t0k3n"
    # The socket, linked into the bot's own directory (relative if the absolute path is too long).
    address = seen["SIXNIMMT_REFEREE"]
    assert address.startswith("unix:") and address.endswith("referee.sock") and address != f"unix:{path}"


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
        # expose: the directory is visible in the sandbox (not hidden by its private /tmp), so
        # only the file's mode stands between the bot and the store.
        box = sandbox(workdir, expose=[store_dir], hide=[])
        process, result, err = run_probe(box, "read", str(store), str(control), "/root/.bashrc")
        assert process.returncode == 0, err
        assert result[str(control)] == "anyone may read this"
        assert result[str(store)] == "PermissionError"
        assert result["/root/.bashrc"] in ("PermissionError", "FileNotFoundError")
        # A store file others could read is masked when named in ``hide`` (by default, the
        # SQLite file of SIXNIMMT_DATABASE_URL).
        os.chmod(store, 0o644)
        box = sandbox(workdir, expose=[store_dir], hide=[store])
        if box.enforced().private_mounts:
            process, result, err = run_probe(box, "read", str(store))
            assert process.returncode == 0, err
            assert result[str(store)] == ""
    finally:
        for path in store_dir.iterdir():
            path.unlink()
        store_dir.rmdir()


@pytest.mark.parametrize("base", ["tmp", "shm"])
def test_the_referee_socket_is_reachable(workdir: Path, tmp_path: Path, base: str) -> None:
    # The socket sits in a 0700 directory of root's; the bot, another user, gets a hard link to
    # it in its own directory, or a bind mount when that is on another file system (/dev/shm).
    if base == "shm":
        if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
            pytest.skip("/dev/shm is not another file system here")
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
        assert json.loads(out)["outcome"] == "connected"
    finally:
        listener.close()
        if base == "shm":
            assert list(bots.iterdir()) == []
            bots.rmdir()


def test_there_is_no_network(workdir: Path) -> None:
    box = sandbox(workdir)
    if not box.enforced().network:
        pytest.skip("no network namespace here: " + "; ".join(box.enforced().notes))
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        own = f"127.0.0.1:{listener.getsockname()[1]}"
        targets = [own, "127.0.0.1:5432", "127.0.0.1:6379"]  # ours, PostgreSQL, Redis
        outside = subprocess.run(
            [sys.executable, PROBE, "connect", *targets], capture_output=True, check=True
        ).stdout
        assert json.loads(outside)[own] == "connected"  # the probe does connect when it may
        process, inside, err = run_probe(box, "connect", *targets)
    finally:
        listener.close()
    assert process.returncode == 0, err
    assert all(result != "connected" for result in inside.values()), inside
    assert inside[own] in ("ENETUNREACH", "ECONNREFUSED", "EHOSTUNREACH")


def test_a_tcp_referee_is_refused_without_network(workdir: Path) -> None:
    box = sandbox(workdir)
    if not box.enforced().network:
        pytest.skip("no network namespace here")
    with pytest.raises(SandboxError, match="Unix socket"):
        box([sys.executable, PROBE, "env"], {"SIXNIMMT_REFEREE": "127.0.0.1:50051"})


def test_no_process_outlives_its_bot(workdir: Path) -> None:
    process, result, err = run_probe(sandbox(workdir), "daemon")
    assert process.returncode == 0, err
    if ROOT:
        # The detached grandchild (setsid, ignoring SIGTERM) is gone with the bot.
        time.sleep(0.1)
        assert _processes_of({result["uid"]}) == []


def test_terminate_and_close_stop_a_running_bot(workdir: Path) -> None:
    box = sandbox(workdir)
    first = box([sys.executable, PROBE, "sleep"], {})
    second = box([sys.executable, PROBE, "sleep"], {})
    for process in (first, second):
        assert process.stdout is not None
        assert json.loads(process.stdout.readline()) == "sleeping"
    first.terminate()
    assert first.wait(5) == -signal.SIGTERM
    box.close()
    assert second.returncode == -signal.SIGKILL
    for process in (first, second):
        assert process.stdout is not None
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()


# -- end to end ----------------------------------------------------------------------------------


def test_a_sandboxed_reference_bot_plays_a_full_game(workdir: Path) -> None:
    box = TrackedSandbox(Limits.from_settings(), workdir)
    with local_referee() as client:
        run = play_remote(
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
