"""Memory a bot holds outside its address space is counted too: a memory cgroup per bot.

``hostile_bots/memfd.py`` holds memory in a memfd, in ``/dev/shm`` and in touched anonymous
pages. The memfd is refused (seccomp). ``/dev/shm`` is a tmpfs whose pages ``RLIMIT_AS`` never
sees: with the tmpfs made larger than the memory limit, the bot is killed by the kernel's OOM
killer for its cgroup and the exit reason names the cgroup's limit; as a control, the same bot
without a cgroup holds all of it. Anonymous memory stops at ``RLIMIT_AS`` (``MemoryError``).
This machine delegates cgroups (v1 memory, as root): where it does not, ``enforced()`` says so
and the test fails, never skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workers.sandbox import Limits, Sandbox, cgroups

PROBE = str(Path(__file__).resolve().parent / "hostile_bots" / "memfd.py")
LIMIT_MB, TMPFS_MB = 128, 320


def run(tmp_path: Path, total_mb: int, *steps: str) -> tuple[list[dict[str, object]], str, Sandbox]:
    sandbox = Sandbox(Limits(memory_mb=LIMIT_MB, file_mb=TMPFS_MB), tmp_path, stdout=subprocess.PIPE)
    with sandbox:
        process = sandbox([sys.executable, PROBE, str(total_mb), *steps], {})
        out, _ = process.communicate(timeout=120)
    return [json.loads(line) for line in out.decode().splitlines()], process.exit_reason() or "", sandbox


def test_a_memory_cgroup_holds_here() -> None:
    found, why = cgroups.memory_cgroups()
    assert found is not None, why
    assert Sandbox(Limits()).enforced().memory_cgroup


def test_shared_memory_beyond_the_limit_is_killed_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = own_cgroups()  # bots of other tests' pools in this process may still be running
    said, reason, sandbox = run(tmp_path, 2 * LIMIT_MB)
    steps = {line["step"]: line for line in said if "step" in line}
    assert steps["memfd"] == {"step": "memfd", "held_mb": 0, "stopped": "EPERM"}
    assert "/dev/shm" not in steps  # killed while filling it
    assert max(int(str(line.get("holding_mb", 0))) for line in said) < LIMIT_MB
    assert reason == f"killed by SIGKILL: memory limit {LIMIT_MB} MB (cgroup) reached"
    assert own_cgroups() - before == set(), "the bot's cgroup was left behind"

    # The control: without its cgroup the same bot holds twice the limit in /dev/shm.
    monkeypatch.setattr(cgroups, "memory_cgroups", lambda: (None, "switched off by the test"))
    said, reason, sandbox = run(tmp_path, 2 * LIMIT_MB)
    steps = {line["step"]: line for line in said if "step" in line}
    assert steps["/dev/shm"] == {"step": "/dev/shm", "held_mb": 2 * LIMIT_MB, "stopped": "held"}, said
    assert not sandbox.enforced().memory_cgroup


def test_anonymous_memory_stops_at_the_address_space_limit(tmp_path: Path) -> None:
    said, reason, _ = run(tmp_path, 4 * LIMIT_MB, "anonymous")
    (anonymous,) = (line for line in said if line.get("step") == "anonymous")
    assert anonymous["stopped"] == "MemoryError" and int(str(anonymous["held_mb"])) < LIMIT_MB, said
    assert reason == "exited with status 0"


def own_cgroups() -> set[Path]:
    """The bot cgroups this process has made and not yet removed."""
    return {p for p in sandbox_parent().iterdir() if p.name.startswith(f"{cgroups.PREFIX}{os.getpid()}-")}


def sandbox_parent() -> Path:
    found, why = cgroups.memory_cgroups()
    assert found is not None, why
    return found.parent


def test_the_bot_runs_in_its_cgroup_from_its_first_instruction(tmp_path: Path) -> None:
    """The bot's own process, not only its launcher, is in a cgroup of its own."""
    code = "print(open('/proc/self/cgroup').read())"
    with Sandbox(Limits(), tmp_path, stdout=subprocess.PIPE) as sandbox:
        process = sandbox([sys.executable, "-c", code], {})
        out, _ = process.communicate(timeout=60)
    lines = dict(line.split(":", 2)[1:] for line in out.decode().splitlines() if line.count(":") >= 2)
    found, _ = cgroups.memory_cgroups()
    assert found is not None
    key = "memory" if found.version == 1 else ""
    assert lines[key].startswith(f"/{cgroups.PREFIX}{os.getpid()}-"), lines


def fake_hierarchy(tmp_path: Path, controllers: str, subtree: str) -> tuple[list[str], list[str], Path]:
    """A cgroup v2 mount's files for a worker in ``/worker``, as the kernel lays them out."""
    mount = tmp_path / "cgroup2"
    worker = mount / "worker"
    worker.mkdir(parents=True)
    (worker / "cgroup.controllers").write_text(controllers + "\n")
    (worker / "cgroup.subtree_control").write_text(subtree + "\n")
    own = ["0::/worker"]
    mounts = [f"35 24 0:30 / {mount} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw"]
    return own, mounts, worker


def test_cgroup_v2_is_used_where_the_worker_may_give_memory_to_children(tmp_path: Path) -> None:
    """The v2 path on files laid out as the kernel does (this machine's v2 has no memory controller)."""
    own, mounts, worker = fake_hierarchy(tmp_path, "cpu memory pids", "memory")
    found, why = cgroups.discover(own, mounts)
    assert found == cgroups.MemoryCgroups(2, worker) and why == ""
    bot = found.create(64 << 20)
    assert bot.path.parent == worker and (bot.path / "memory.max").read_text() == str(64 << 20)
    (bot.path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert bot.oom_kills() == 1
    (bot.path / "memory.events").unlink()
    (bot.path / "memory.max").unlink()
    bot.remove()
    assert not bot.path.exists()

    own, mounts, worker = fake_hierarchy(tmp_path / "none", "cpu pids", "")
    found, why = cgroups.discover(own, mounts)
    assert found is None and "gives" in why and "no memory controller" in why
    assert cgroups.discover(["0::/elsewhere"], mounts)[0] is None
