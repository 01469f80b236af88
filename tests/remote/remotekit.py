"""Real processes for the remote-bot tests: a ``sixnimmt referee serve`` with a public TCP port (TLS
or not) and a Unix socket for the league, a store, and ``sixnimmt bot connect`` subprocesses.

Accounts and keys are made in this process (``workers.bots.accounts``, as the commands do) where the
commands themselves are not what a test is about: each ``sixnimmt`` command costs about 2 s here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from testkit import free_port, sixnimmt, wait_for

ADMIN = "remote-test-admin-token"


@dataclass
class Referee:
    """A running ``sixnimmt referee serve``: its public address, its Unix socket, its log."""

    public: str
    socket: str
    process: subprocess.Popen[str]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_referee(directory: Path, *extra: str) -> Referee:
    """Serve a referee on 127.0.0.1:<free port> (``extra``: e.g. the TLS flags) and a Unix socket."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    socket = directory / "referee.sock"
    ready = directory / "ready"
    log = directory / "referee.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    process = subprocess.Popen(
        [
            sys.executable, "-m", "bot_sdk.cli", "referee", "serve",
            "--listen", f"127.0.0.1:{port}", "--also-listen", f"unix:{socket}",
            "--ready-file", str(ready), *extra,
        ],
        # A short connect window: a bot still offline when its block starts is defaulted soon.
        env={
            **env,
            "SIXNIMMT_ADMIN_TOKEN": ADMIN,
            "SIXNIMMT_REFEREE_METRICS_PORT": "0",
            "SIXNIMMT_CONNECT_MS": "5000",
        },
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    referee = Referee(f"127.0.0.1:{port}", f"unix:{socket}", process, log)
    try:
        wait_for(lambda: ready.exists() or process.poll() is not None, 30, "the referee to start")
        assert process.poll() is None, log.read_text()
    except BaseException:
        referee.stop()
        raise
    return referee


@dataclass
class Site:
    """A store and the referee remote bots connect to, as a league operator runs them."""

    cwd: Path
    referee: Referee
    env: dict[str, str] = field(default_factory=dict)
    bots: list[subprocess.Popen[str]] = field(default_factory=list)

    def cli(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return sixnimmt(self.cwd, *args, env={**self.env, **(env or {})})

    def ok(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = self.cli(*args, env=env)
        assert done.returncode == 0, done.stderr
        return done

    def engine(self) -> Any:
        from workers.store.engine import make_engine
        from workers.store.migrate import upgrade

        engine = make_engine(self.env["SIXNIMMT_DATABASE_URL"])
        upgrade(engine)
        return engine

    def account(self, name: str, **limits: int) -> str:
        """A new account with one key (``limits``: max_connections, max_matches); returns the key.

        The referee is handed the store's keys at once, as each remote block does first.
        """
        from workers.bots import accounts

        engine = self.engine()
        try:
            accounts.create_account(engine, name)
            _, key = accounts.create_key(engine, name, **limits)
            self.push(engine)
        finally:
            engine.dispose()
        return key

    def push(self, engine: Any) -> None:
        from arena.matches import RefereeClient
        from workers.bots import connected as remote

        client = RefereeClient(self.referee.socket, admin_token=ADMIN)
        try:
            remote.push_keys(engine, client)
        finally:
            client.close()

    def admin(self) -> Any:
        from arena.matches import RefereeClient

        return RefereeClient(self.referee.socket, admin_token=ADMIN)

    def connect(self, key: str, *extra: str, bot: str = "random") -> BotConnection:
        """``sixnimmt bot connect BOT --server … --key …`` in its own process (stopped at the end)."""
        err = self.cwd / f"connect-{len(self.bots)}.err"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
        process = subprocess.Popen(
            [sys.executable, "-m", "bot_sdk.cli", "bot", "connect", bot, "--key", key, *extra],
            cwd=self.cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err.open("w"),
            text=True,
        )
        self.bots.append(process)
        if "--server" not in extra:
            raise AssertionError("pass --server")
        return BotConnection(process, err)

    def stop_bots(self) -> None:
        for process in self.bots:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.bots:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass
class BotConnection:
    """A ``bot connect`` process and its stderr."""

    process: subprocess.Popen[str]
    err: Path

    def stderr(self) -> str:
        return self.err.read_text()

    def wait_line(self, text: str, timeout: float = 30) -> str:
        wait_for(lambda: text in self.stderr() or self.process.poll() is not None, timeout, repr(text))
        assert text in self.stderr(), self.stderr()
        return self.stderr()

    def ended(self, timeout: float = 30) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"bot connect still running after {timeout} s; its stderr:\n{self.stderr()}"
            ) from None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A referee (plaintext public port), a SQLite store, and the settings that join them (one per
    module: tests use accounts of their own)."""
    tmp_path = tmp_path_factory.mktemp("remote-site")
    referee = start_referee(tmp_path / "referee-files")
    env = {
        "SIXNIMMT_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
        "SIXNIMMT_REMOTE_REFEREE": referee.socket,
        "SIXNIMMT_ADMIN_TOKEN": ADMIN,
    }
    running = Site(tmp_path, referee, env)
    try:
        yield running
    finally:
        running.stop_bots()
        referee.stop()
