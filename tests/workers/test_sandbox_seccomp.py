"""The sandbox's seccomp filter, shown with real processes (tests/workers/hostile_bots/syscalls.py).

The probe makes each refused system call; unconfined first, as a control, the calls the filter
exists for succeed on this machine (a memfd, a key, a new user namespace, SysV shared memory, a
vsock socket), so a filter that did nothing would fail here. Sandboxed, each fails with EPERM
(EAFNOSUPPORT for the refused socket families, ENOSYS for clone3) and the bot goes on; a system
call through another architecture's gate kills it. Python threads, a shell and setpriv run
under the same filter in every other sandbox test.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from workers.sandbox import Limits, Sandbox, seccomp

PROBE = str(Path(__file__).resolve().parent / "hostile_bots" / "syscalls.py")
X86_64 = platform.machine() == "x86_64"
REFUSED_WITH = {"clone3": "ENOSYS", "socket(AF_VSOCK)": "EAFNOSUPPORT", "socket(AF_ALG)": "EAFNOSUPPORT"}
ALLOWED = {"personality(0)"}
"""What the probe also tries and the filter lets through."""
CONTROL = (
    "memfd_create",
    "add_key",
    "keyctl",
    "unshare(CLONE_NEWUSER)",
    "shmget",
    "msgget",
    "socket(AF_VSOCK)",
)
"""Calls that succeed unconfined on this machine: the filter is what refuses them below."""

pytestmark = pytest.mark.skipif(not X86_64, reason="the probe's system call numbers are x86_64's")


def report(lines: str) -> dict[str, str]:
    said: dict[str, str] = {}
    for line in lines.splitlines():
        said.update(json.loads(line))
    return said


def sandboxed(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    with Sandbox(Limits(), tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as sandbox:
        process = sandbox([sys.executable, PROBE, *args], {})
        out, err = process.communicate(timeout=60)
        done = subprocess.CompletedProcess(process.args, process.returncode, out.decode(), err.decode())
        return done, process.exit_reason() or ""


def test_each_refused_system_call_fails_and_the_bot_goes_on(tmp_path: Path) -> None:
    control = subprocess.run([sys.executable, PROBE], capture_output=True, text=True, timeout=60, check=True)
    unconfined = report(control.stdout)
    assert {call: unconfined[call] for call in CONTROL} == dict.fromkeys(CONTROL, "OK"), unconfined
    done, reason = sandboxed(tmp_path)
    assert done.returncode == 0, (reason, done.stderr)
    said = report(done.stdout)
    assert set(said) == set(unconfined)
    expected = {call: "OK" if call in ALLOWED else REFUSED_WITH.get(call, "EPERM") for call in said}
    assert said == expected


def test_keys_cannot_be_made_so_none_outlives_its_bot(tmp_path: Path) -> None:
    before = Path("/proc/keys").read_text()
    done, _ = sandboxed(tmp_path)
    said = report(done.stdout)
    assert said["add_key"] == said["keyctl"] == said["request_key"] == "EPERM"
    assert "sixnimmt-hostile" not in Path("/proc/keys").read_text().replace(before, "")


@pytest.mark.parametrize("gate", ["int80", "x32"])
def test_a_system_call_of_another_architecture_kills_the_bot(tmp_path: Path, gate: str) -> None:
    if gate == "int80":  # unconfined, i386's gate answers getpid (x32 is often not built in at all)
        control = subprocess.run([sys.executable, PROBE, gate], capture_output=True, text=True, timeout=60)
        assert json.loads(control.stdout)[gate] > 0, control
    done, reason = sandboxed(tmp_path, gate)
    assert done.stdout == "" and done.returncode == -31
    assert reason == "killed by SIGSYS: a system call the seccomp filter kills for (another architecture's)"


def test_threads_work_under_the_filter(tmp_path: Path) -> None:
    code = (
        "import threading, concurrent.futures as f\n"
        "with f.ThreadPoolExecutor(8) as pool: print(sum(pool.map(lambda n: n * n, range(100))))\n"
    )
    with Sandbox(Limits(), tmp_path, stdout=subprocess.PIPE) as sandbox:
        process = sandbox([sys.executable, "-c", code], {})
        out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and out.decode().strip() == str(sum(n * n for n in range(100)))


def test_the_filter_is_built_once_per_process() -> None:
    assert seccomp.filter_bpf() is seccomp.filter_bpf()
    assert len(seccomp.filter_bpf()) % 8 == 0  # whole BPF instructions


def test_without_libseccomp_the_sandbox_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.sandbox import SandboxError

    def missing() -> bytes:
        raise seccomp.SeccompUnavailable("libseccomp cannot be loaded (test): apt-get install libseccomp2")

    monkeypatch.setattr(seccomp, "filter_bpf", missing)
    with pytest.raises(SandboxError, match="never runs a bot without its seccomp filter"):
        Sandbox(Limits())
