"""The base install alone: a fresh venv with ``pip install sixnimmt-arena`` (no extras).

A bot author installs the SDK, the referee and the platform's local commands, and nothing of the
``server`` extra (no SQLAlchemy, Celery, Starlette, …). Every command of the base install works
there; the league's and the dashboard's commands say in one line which extra to install (or are
absent from ``--help``), never with a traceback. The wheel is built offline from a copy of the
packages, as the image's builder builds it; its dependencies come from the package index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.matches import MatchPlan, RefereeClient, RefereeError

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("referee", "games", "bot_sdk", "arena", "workers", "dashboard", "sixnimmt")
SERVER_ONLY = (
    "sqlalchemy",
    "alembic",
    "celery",
    "starlette",
    "uvicorn",
    "numpy",
    "scipy",
    "prometheus_client",
)
EXTRA = "pip install 'sixnimmt-arena[server]'"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the base install of this tree."""
    root = tmp_path_factory.mktemp("sdk-only")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    wheels = root / "wheels"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
    )
    if built.returncode != 0:
        pytest.fail(f"building the wheel failed (setuptools>=77 in the dev venv?):\n{built.stderr[-3000:]}")
    (wheel,) = wheels.glob("sixnimmt_arena-*.whl")
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=120)
    installed = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if installed.returncode != 0:
        pytest.fail(
            f"pip install of the base package failed (is the index reachable?):\n{installed.stderr[-3000:]}"
        )
    return env


def sixnimmt(
    venv: Path, tmp_path: Path, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the venv's ``sixnimmt`` in ``tmp_path``, with no setting of this machine's and its own data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIXNIMMT_", "PYTHON", "VIRTUAL_ENV"))}
    env |= {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
    }
    return subprocess.run(
        [str(venv / "bin" / "sixnimmt"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        env=env,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return result.stdout


def one_line_refusal(result: subprocess.CompletedProcess[str]) -> str:
    """A command of a missing extra: status 2 and one line that names the extra."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert EXTRA in lines[0]
    return lines[0]


def test_the_base_install_has_no_server_library(venv: Path) -> None:
    code = f"import importlib.util as u; print([m for m in {SERVER_ONLY!r} if u.find_spec(m)])"
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_help_lists_the_base_commands_and_names_the_extra_of_the_others(venv: Path, tmp_path: Path) -> None:
    text = ok(sixnimmt(venv, tmp_path, "--help"))
    for command in ("variants", "settings", "play", "verify", "replay", "bot", "arena", "referee"):
        assert re.search(rf"^    {command}\s+[a-z]", text, re.M), command
    for command in ("league", "worker", "dashboard"):
        assert re.search(rf"^    {command}\s+\(not installed: {re.escape(EXTRA)}\)", text, re.M), command
    bot = ok(sixnimmt(venv, tmp_path, "bot", "--help"))
    for command in ("run", "play", "check"):
        assert re.search(rf"^    {command}\s+[a-z]", bot, re.M), command
    for command in ("submit", "list", "test"):
        assert re.search(rf"^    {command}\s+\(not installed: {re.escape(EXTRA)}\)", bot, re.M), command
    ok(sixnimmt(venv, tmp_path, "--version"))


def test_variants_settings_and_in_process_play(venv: Path, tmp_path: Path) -> None:
    assert "classic" in ok(sixnimmt(venv, tmp_path, "variants"))
    ok(sixnimmt(venv, tmp_path, "settings"))
    out = json.loads(
        ok(
            sixnimmt(
                venv,
                tmp_path,
                "play",
                "--bots",
                "random,lowest,heuristic",
                "--games",
                "3",
                "--transcripts",
                "games",
                "--json",
            )
        )
    )
    assert out["games"] == 3
    ok(sixnimmt(venv, tmp_path, "verify", "games/game-0000.json"))
    ok(sixnimmt(venv, tmp_path, "replay", "games/game-0000.json"))


@pytest.fixture
def referee(venv: Path, tmp_path: Path) -> Iterator[RefereeClient]:
    """The venv's ``sixnimmt referee serve`` on a Unix socket, and its admin client."""
    socket = f"unix:{tmp_path / 'referee.sock'}"
    ready, token = tmp_path / "ready", tmp_path / "admin-token"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    process = subprocess.Popen(
        [
            str(venv / "bin" / "sixnimmt"),
            "referee",
            "serve",
            "--listen",
            socket,
            "--ready-file",
            str(ready),
            "--admin-token-file",
            str(token),
            "--metrics-port",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "the referee did not start"
            time.sleep(0.05)
        client = RefereeClient(socket, admin_token=token.read_text().strip())
        client.wait_serving()
        yield client
        client.close()
    finally:
        process.terminate()
        process.wait(20)


def test_bot_run_plays_against_a_referee_of_the_base_install(
    venv: Path, tmp_path: Path, referee: RefereeClient
) -> None:
    """``sixnimmt bot run``, one process per entrant, each with its token, as an author runs a bot."""
    plans = [MatchPlan(("a", "b"), 11), MatchPlan(("b", "a"), 12)]
    ids, tokens = referee.create_matches("classic", {"players": 2}, plans, decision_ms=5000)
    bots = {"a": "random", "b": "heuristic"}
    processes = [
        subprocess.Popen(
            [
                str(venv / "bin" / "sixnimmt"),
                "bot",
                "run",
                bots[name],
                "--referee",
                referee.address,
                "--token",
                token,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for name, token in tokens.items()
    ]
    results = [referee.result(match_id, wait=True, timeout=120) for match_id in ids]
    for process in processes:
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert "Traceback" not in err
    assert [r.status for r in results] == ["finished", "finished"]


def test_bot_connect_plays_remote_matches_from_the_base_install(
    venv: Path, tmp_path: Path, referee: RefereeClient
) -> None:
    """``sixnimmt bot connect``, as an author runs it on their own machine: the base install only.

    The key's hash is handed to the referee as the league does (``SetRemoteKeys``); a wrong key
    is refused in one line, the right one plays the matches the referee seats it in."""
    import hashlib
    import secrets

    from sixnimmt.v1 import referee_pb2

    key = f"snk_sdkonly01_{secrets.token_urlsafe(32)}"
    request = referee_pb2.SetRemoteKeysRequest()
    request.keys.add(
        key_id="sdkonly01",
        account="author",
        sha256=hashlib.sha256(key.encode()).hexdigest(),
        max_connections=1,
        max_matches=4,
    )
    referee.stub.SetRemoteKeys(request, timeout=30, metadata=referee.metadata)
    command = [str(venv / "bin" / "sixnimmt"), "bot", "connect", "heuristic", "--server", referee.address]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    wrong = subprocess.run(
        [*command, "--key", key[:-4] + "xxxx", "--retries", "0"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert wrong.returncode == 2, wrong.stderr
    assert "UNAUTHENTICATED" in wrong.stderr and "Traceback" not in wrong.stderr
    process = subprocess.Popen(
        [*command, "--key", key], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                run = play_remote_matches(referee)
                break
            except RefereeError as exc:  # not connected yet
                assert "not connected" in str(exc), exc
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "bot connect did not connect within a minute"
                time.sleep(0.2)
        assert [r.status for r in run] == ["finished", "finished"]
        assert all(not sum(seat.faults.values()) for r in run for seat in r.seats)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=60)
    assert "Traceback" not in err, err


def play_remote_matches(referee: RefereeClient) -> list[Any]:
    """Two matches of the connected remote bot (entrant ``me``) against a random bot's process."""
    from arena.matches import play_matches

    plans = [MatchPlan(("me", "r"), 21), MatchPlan(("r", "me"), 22)]
    run = play_matches(
        {"r": "random"}, plans, client=referee, config={"players": 2, "hands": 1, "target": None},
        remote={"me": "author"},
    )  # fmt: skip
    return list(run.matches)


def test_bot_play_bot_check_and_arena_under_a_local_referee(venv: Path, tmp_path: Path) -> None:
    """The platform's commands of the base install: bots as processes under ``referee serve``."""
    bot = tmp_path / "cautious_bot.py"
    shutil.copy2(REPO / "examples" / "cautious_bot.py", bot)
    played = json.loads(
        ok(
            sixnimmt(
                venv,
                tmp_path,
                "bot",
                "play",
                str(bot),
                "--against",
                "random,heuristic",
                "--games",
                "3",
                "--json",
            )
        )
    )
    assert played["games"] == 3
    checked = json.loads(ok(sixnimmt(venv, tmp_path, "bot", "check", str(bot), "--games", "4", "--json")))
    assert checked["ok"], checked
    table = json.loads(
        ok(
            sixnimmt(
                venv,
                tmp_path,
                "arena",
                "--bots",
                "random,lowest,highest",
                "--table",
                "3",
                "--deals",
                "1",
                "--json",
            )
        )
    )
    assert table["games"] == 3


def test_commands_of_the_server_extra_say_which_extra_in_one_line(venv: Path, tmp_path: Path) -> None:
    for args in (
        ("league", "list"),
        ("league", "create", "x", "--bots", "random,lowest"),
        ("league", "--help"),
        ("worker",),
        ("bot", "submit", "x.py", "--name", "x"),
        ("bot", "list", "--json"),
        ("bot", "test", "random", "--base", "lowest"),
        ("dashboard", "--port", "0"),
    ):
        line = one_line_refusal(sixnimmt(venv, tmp_path, *args))
        command = " ".join(args[:2] if args[0] == "bot" else args[:1])
        assert line.startswith(f"sixnimmt {command}: this command needs "), line
    assert not (tmp_path / "data" / "sixnimmt").exists()  # no store was made


def test_the_replay_viewer_needs_the_view_extra_alone(venv: Path, tmp_path: Path) -> None:
    """``sixnimmt view``: without Jinja2 one line naming the ``view`` extra; with it (and still
    nothing of the ``server`` extra) the viewer serves a game ``play`` wrote. Runs last: it
    installs the extra into the module's venv, which no other test here minds."""
    import signal
    import urllib.request

    view_extra = "pip install 'sixnimmt-arena[view]'"
    ok(
        sixnimmt(
            venv, tmp_path, "play", "--bots", "random,heuristic", "--games", "1", "--transcripts", "games"
        )
    )
    game = str(tmp_path / "games" / "game-0000.json")
    assert re.search(
        rf"^    view\s+\(not installed: {re.escape(view_extra)}\)",
        ok(sixnimmt(venv, tmp_path, "--help")),
        re.M,
    )
    result = sixnimmt(venv, tmp_path, "view", game)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"sixnimmt view: this command needs jinja2, which is not installed: {view_extra}"
    ]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    installed = subprocess.run([*pip, "jinja2>=3.1"], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    test_the_base_install_has_no_server_library(venv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIXNIMMT_", "PYTHON", "VIRTUAL_ENV"))}
    viewer = subprocess.Popen(
        [str(venv / "bin" / "sixnimmt"), "view", "--no-open", "--json", game],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        assert viewer.stdout is not None
        shown = json.loads(viewer.stdout.readline())
        with urllib.request.urlopen(shown["games"][0]["url"] + "?step=1&seat=1", timeout=30) as response:
            page = response.read().decode()
        assert 'id="step">1<' in page and "hand hidden" in page
        viewer.send_signal(signal.SIGINT)
        _, err = viewer.communicate(timeout=30)
    finally:
        if viewer.poll() is None:
            viewer.kill()
            viewer.wait()
    assert viewer.returncode == 0, err
    assert "Traceback" not in err
