"""``sixnimmt api serve`` as a process: it migrates (or creates) the store, serves, and stops on
SIGTERM; a store it cannot use is one line and exit status 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from testkit import free_port, wait_for


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env["SIXNIMMT_DATABASE_URL"] = url
    return env


def _get(url: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]
    except OSError:
        return None


def test_api_serve_serves_a_new_store_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", "api", "serve", "--port", str(port), "--log-level", "warning"],
        env=_env(f"sqlite:///{tmp_path / 'store.db'}"),
        cwd=tmp_path,  # not the tree: a stale sixnimmt_arena.egg-info there would name the plugins
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(
            lambda: _get(f"http://127.0.0.1:{port}/healthz") or server.poll() is not None, 120, "the API"
        )
        assert server.poll() is None, server.communicate()[1]
        assert _get(f"http://127.0.0.1:{port}/v1/leagues") == []  # type: ignore[comparison-overlap]
        assert (tmp_path / "store.db").exists()
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again for its caller.
    assert server.returncode in (0, -signal.SIGTERM), err
    assert f"http://127.0.0.1:{port}/docs" in err


def test_api_serve_says_in_one_line_that_it_cannot_use_the_store(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", "api", "serve", "--port", "0"],
        env=_env(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'store.db'}"),
        cwd=tmp_path,  # not the tree: a stale sixnimmt_arena.egg-info there would name the plugins
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("sixnimmt: error: cannot use the store: "), done.stderr
