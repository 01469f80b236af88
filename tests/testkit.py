"""Helpers every test kit shares: polling with a deadline, a free TCP port, the command line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll ``condition`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sixnimmt(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sixnimmt ARGS`` in ``cwd`` with none of this machine's SIXNIMMT_* settings, plus ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
