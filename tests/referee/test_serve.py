"""``sixnimmt referee serve`` as a process: its admin token stays out of its log, and its metrics
bind to the host it listens on (loopback for a Unix socket), unless configured otherwise."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.server.app import metrics_host
from referee.settings import Settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_hosts(port: int) -> set[str]:
    """The local addresses of the TCP sockets listening on ``port`` (from /proc/net/tcp)."""
    hosts = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, state = fields[1], fields[3]
        host_hex, port_hex = address.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            hosts.add(socket.inet_ntoa(bytes.fromhex(host_hex)[::-1]))
    return hosts


def test_the_admin_token_is_not_logged_and_metrics_stay_on_loopback(tmp_path: Path) -> None:
    port = free_port()
    token_file = tmp_path / "admin-token"
    ready = tmp_path / "ready"
    env = {k: v for k, v in os.environ.items() if k != "SIXNIMMT_ADMIN_TOKEN"}
    env["SIXNIMMT_REFEREE_METRICS_PORT"] = str(port)
    command = [
        sys.executable,
        "-m",
        "bot_sdk.cli",
        "referee",
        "serve",
        "--listen",
        f"unix:{tmp_path / 'sock'}",
    ]
    process = subprocess.Popen(
        [*command, "--ready-file", str(ready), "--admin-token-file", str(token_file)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not (ready.exists() and listening_hosts(port)):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        assert listening_hosts(port) == {"127.0.0.1"}
    finally:
        process.terminate()
        log, _ = process.communicate(timeout=10)
    token = token_file.read_text()
    assert len(token) >= 32
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token.encode() not in log
    assert b"SIXNIMMT_ADMIN_TOKEN is not set" in log and str(token_file).encode() in log


@pytest.mark.parametrize(
    ("listen", "configured", "host"),
    [
        ("unix:/tmp/referee.sock", "", "127.0.0.1"),
        ("127.0.0.1:50051", "", "127.0.0.1"),
        ("0.0.0.0:50051", "", "0.0.0.0"),
        ("[::]:50051", "", "::"),
        ("[::1]:50051", "", "::1"),
        ("127.0.0.1:50051", "0.0.0.0", "0.0.0.0"),
    ],
)
def test_metrics_bind_to_the_listen_host_unless_configured(listen: str, configured: str, host: str) -> None:
    assert metrics_host(listen, Settings(referee_metrics_host=configured)) == host


def test_referee_serve_loads_only_its_own_commands(tmp_path: Path) -> None:
    """``sixnimmt referee serve`` (as ``local_referee`` starts it) loads the referee's plugin
    alone: none of the store (SQLAlchemy), Celery or ``workers`` once it serves."""
    ready = tmp_path / "ready"
    probe = (
        "import sys, runpy, threading, time, os\n"
        "def watch():\n"
        f"    while not os.path.exists({str(ready)!r}): time.sleep(0.02)\n"
        "    store = ('sqlalchemy', 'workers', 'celery')\n"
        "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in store)\n"
        "    print('LOADED', loaded, flush=True)\n"
        "    os._exit(0)\n"
        "threading.Thread(target=watch, daemon=True).start()\n"
        "sys.argv = ['sixnimmt', 'referee', 'serve', '--listen', "
        f"'unix:{tmp_path / 'sock'}', '--ready-file', {str(ready)!r}]\n"
        "runpy.run_module('bot_sdk.cli', run_name='__main__')\n"
    )
    env = {**os.environ, "SIXNIMMT_REFEREE_METRICS_PORT": "0"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert "LOADED []" in done.stdout, done.stdout + done.stderr


def test_referee_serve_says_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "SIXNIMMT_DECISION_MS": "soon"}
    done = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "referee", "serve", "--listen", f"unix:{tmp_path / 'sock'}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    expected = "sixnimmt: error: SIXNIMMT_DECISION_MS must be an integer, got 'soon'"
    assert done.stderr.strip().splitlines() == [expected]
