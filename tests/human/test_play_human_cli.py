"""``sixnimmt play --human`` as a user runs it: the command in its own process (a real referee,
real bot processes), played over HTTP as the page plays; bad input is one line and status 2."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from humankit import seat_actions
from testkit import sixnimmt, wait_for

from referee.rules.transcript import Transcript, verify

REPO = Path(__file__).resolve().parents[2]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def _post(url: str, value: Any) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(value).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def test_play_human_serves_the_table_plays_and_writes_verified_transcripts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    env |= {"SIXNIMMT_HUMAN_GRACE_S": "1", "BROWSER": "false"}
    games = tmp_path / "games"
    command = [
        sys.executable, "-m", "bot_sdk.cli", "play", "--human", "--bots", "random,heuristic",
        "-o", "hand_size=3", "-o", "hands=1", "--games", "2", "--name", "ann", "--no-open", "--json",
        "--transcripts", str(games),
    ]  # fmt: skip
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
    )
    try:
        assert run.stdout is not None
        first = json.loads(run.stdout.readline())
        (seat,) = first["seats"]
        assert seat["name"] == "human:ann" and first["url"] == seat["url"]
        api = seat["url"].replace("/seats/", "/api/seats/")
        rng = random.Random(2)
        chosen: dict[int, list[Any]] = {1: [], 2: []}
        version = None
        while True:
            state = _get(f"{api}/state?wait=5" + ("" if version is None else f"&after={version}"))["state"]
            version = state["version"]
            decision = state["decision"]
            if decision is not None and decision["chosen"] is None:
                index = rng.randrange(len(decision["options"]))
                _post(f"{api}/choose", {"request_id": decision["request_id"], "index": index})
                chosen[state["game"]].append(decision["options"][index])
            if state["status"] == "over" and state["game"] == 2 and state.get("replay"):
                break
        summary = json.loads(run.stdout.readline())["games"]
        # No page asks any more: the command ends by itself after the grace period.
        assert run.wait(60) == 0, run.stderr.read() if run.stderr else ""
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert [game["file"] for game in summary] == [
        str(games / "game-0000.json"),
        str(games / "game-0001.json"),
    ]
    for number, game in enumerate(summary):
        transcript = Transcript.from_json(json.loads(Path(game["file"]).read_text()))
        outcome = verify(transcript)
        assert game["digest"] == transcript.digest()
        seat_no = transcript.meta["seats"].index("human:ann")
        assert seat_no == number  # everyone moves one seat on each game
        assert seat_actions(transcript, seat_no) == chosen[number + 1]
        assert [s["score"] for s in game["seats"]] == list(outcome.scores)


def _taken_port() -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--bots", "random", "--variant", "nope"], "unsupported variant: 'nope'"),
        (
            ["--bots", "random", "-o", "players=4"],
            "a 4-player game needs 3 bots besides 1 person; --bots gave 1",
        ),
        (["--bots", "no_such_bot.py,random"], "no bot file at no_such_bot.py"),
        (["--bots", "random", "--name", "ann,ann"], "two people of one name"),
        (["--bots", "random", "--name", "a" * 40], "printable characters"),
        (["--bots", "random,random", "-o", "nope=1"], "nope"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, args: list[str], words: str) -> None:
    done = sixnimmt(tmp_path, "play", "--human", "--no-open", *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sixnimmt: error: ") and words in lines[0], done.stderr
    assert done.stdout == ""


def test_a_port_in_use_is_one_line_and_status_2(tmp_path: Path) -> None:
    with _taken_port() as listener:
        port = listener.getsockname()[1]
        done = sixnimmt(tmp_path, "play", "--human", "--no-open", "--bots", "random", "--port", str(port))
    assert done.returncode == 2
    assert (
        done.stderr.strip() == f"sixnimmt: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


def test_play_without_human_is_the_sdks_local_arena(tmp_path: Path) -> None:
    done = sixnimmt(tmp_path, "play", "--bots", "random,random", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 10


def _bots_of(pid: int) -> set[int]:
    """The bot processes (``python -m bot_sdk.run``) whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"bot_sdk.run" in argv:
                found.add(int(entry.name))
    return found


def test_play_human_opens_the_browser_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")} | {"BROWSER": str(browser)}
    command = [sys.executable, "-m", "bot_sdk.cli", "play", "--human", "--bots", "random,random"]
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
    )
    try:
        assert run.stdout is not None
        line = run.stdout.readline()
        assert line.startswith("sixnimmt play: your table is at http://127.0.0.1:") and "Ctrl-C" in line
        url = line.split(" at ", 1)[1].split()[0]
        assert wait_for(lambda: opened.exists() and opened.read_text().strip(), 60, "the browser") == url
        api = url.replace("/seats/", "/api/seats/")
        state = _get(f"{api}/state")["state"]
        while state["decision"] is None:  # the bots are up and the game runs
            state = _get(f"{api}/state?wait=5&after={state['version']}")["state"]
        bots = _bots_of(run.pid)
        assert len(bots) == 2  # the referee runs in the command's process
        run.send_signal(signal.SIGINT)
        assert run.wait(60) == 0
        assert "sixnimmt play: stopped" in (run.stderr.read() if run.stderr else "")
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert not [pid for pid in bots if _alive(pid)]  # no bot left behind


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
