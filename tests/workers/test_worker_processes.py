"""``sixnimmt worker`` processes on one host: each its own node name, a metrics port taken is a clear
stop, and SIGTERM leaves no warm or block directory behind.

Real ``sixnimmt worker`` processes on PostgreSQL and Redis, bots sandboxed. No mocks.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import free_port, wait_for

from workers import league as leagues
from workers.store import repo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery-services")]

BOTS = ["random", "heuristic", "lowest", "highest"]


class Workers:
    """``sixnimmt worker`` processes of one test, each in its own session, killed at its end."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self.started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.root / f"worker-{len(self.started)}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "bot_sdk.cli", "worker", "--concurrency", "1", *args],
                env={**os.environ, **self.env, "PYTHONUNBUFFERED": "1"},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.started.append((process, log))
        return process, log

    def stop_all(self) -> None:
        for process, _log in self.started:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)  # its own session: this worker's processes
                process.wait()


@pytest.fixture
def workers(pg_url: str, redis_url: str, request: pytest.FixtureRequest) -> Iterator[Workers]:
    # Short: the referee's Unix socket lives under it (a path of at most 107 bytes).
    tmp = Path(tempfile.mkdtemp(prefix="sxw-"))
    tmp.chmod(0o711)
    started = Workers(
        tmp,
        {"SIXNIMMT_DATABASE_URL": pg_url, "SIXNIMMT_BROKER_URL": redis_url, "TMPDIR": str(tmp)},
    )
    try:
        yield started
    finally:
        started.stop_all()
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            for _process, log in started.started:
                print(f"\n----- {log.name} -----\n{log.read_text(errors='replace')[-6000:]}")
        shutil.rmtree(tmp, ignore_errors=True)


def _ready(process: subprocess.Popen[bytes], log: Path) -> str:
    """The node name the worker says it is ready as (waits for the line)."""

    def said() -> str | None:
        assert process.poll() is None, log.read_text(errors="replace")
        found = re.search(r"(\S+@\S+) ready\.", log.read_text(errors="replace"))
        return found.group(1) if found else None

    return wait_for(said, 120, "the worker to be ready", 0.1)


def _ours(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("sixnimmt-"))


def test_workers_on_one_host_have_their_own_names_and_a_taken_metrics_port_stops_one(
    exclusive_machine: None, workers: Workers
) -> None:
    port = free_port()
    first, first_log = workers.start("--metrics-port", str(port))
    first_name = _ready(first, first_log)
    assert re.fullmatch(rf"sixnimmt-{first.pid}@\S+", first_name), first_name

    clash, clash_log = workers.start("--metrics-port", str(port))
    assert clash.wait(120) == 2
    said = clash_log.read_text(errors="replace")
    assert f"sixnimmt: error: cannot serve the worker's metrics on port {port}" in said, said
    assert "--metrics-port 0" in said and "Traceback" not in said

    second, second_log = workers.start("--metrics-port", "0")
    second_name = _ready(second, second_log)
    assert re.fullmatch(rf"sixnimmt-{second.pid}@\S+", second_name) and second_name != first_name
    named, named_log = workers.start("--metrics-port", "0", "--hostname", "mine@%h")
    assert _ready(named, named_log).startswith("mine@")


def test_sigterm_leaves_no_warm_or_block_directory(
    exclusive_machine: None, engine: Any, pg_url: str, workers: Workers
) -> None:
    league = leagues.create(
        engine, "term", BOTS, config={"hands": 2, "target": None}, table_size=4, deals=2, seed=5
    )
    worker, log = workers.start("--metrics-port", "0")
    _ready(worker, log)
    env = {**os.environ, **workers.env}
    started = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "league", "start", "term"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert started.returncode == 0, started.stderr
    wait_for(lambda: repo.league_phase(engine, league.id) == "finished", 300, "the league to be played", 0.2)
    # The pool process keeps its warm bots and their directory between blocks.
    assert any("warm-" in name for name in _ours(workers.root)), _ours(workers.root)
    worker.send_signal(signal.SIGTERM)  # the main process only, as Kubernetes does
    assert worker.wait(120) is not None
    assert _ours(workers.root) == [], "no warm pool, block or bot directory left"
