"""``sixnimmt view``: bad input is one line and status 2, the server answers as the dashboard does,
a seat's pages never hold another seat's hidden cards, and Ctrl-C stops it.

The browser test (a real ``bot play --view`` run, stepped through in chromium) is
test_view_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from test_replay import anniversary_played, played

from dashboard.replay import HIDDEN
from dashboard.view import Viewer, load_games
from referee.rules.registry import VARIANTS

REPO = Path(__file__).resolve().parents[2]


def sixnimmt(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot_sdk.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """Status 2, nothing on stdout, one line on stderr and no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A transcript written by ``sixnimmt play --transcripts``."""
    folder = tmp_path_factory.mktemp("view") / "games"
    result = sixnimmt(
        "play", "--bots", "random,heuristic,lowest", "--games", "2", "--transcripts", str(folder),
        "-o", "hands=1", "-o", "target=None", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return folder / "game-0000.json"


def written(tmp_path: Path, name: str, body: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body)
    return path


def test_bad_files_are_one_line_and_status_2(game_file: Path, tmp_path: Path) -> None:
    good = json.loads(game_file.read_text())
    text = game_file.read_text()
    unknown = dict(good, variant="no-such-game")
    short = dict(good, steps=good["steps"][:-3])
    illegal = json.loads(text)
    illegal["steps"][2][0][1] = 1000  # a card nobody holds
    cases = {
        "missing": (tmp_path / "nowhere.json", r"no such file: .*nowhere\.json"),
        "truncated file": (written(tmp_path, "cut.json", text[: len(text) // 2]), r"cut\.json is not JSON"),
        "not a transcript": (written(tmp_path, "list.json", "[1, 2, 3]"), r"list\.json.*JSON object"),
        "no steps": (
            written(tmp_path, "nosteps.json", json.dumps({"format": 1})),
            r"nosteps\.json.*malformed",
        ),
        "binary": (written(tmp_path, "bin.json", b"\xff\xfe\x00junk"), r"bin\.json is not UTF-8"),
        "unknown game": (
            written(tmp_path, "unknown.json", json.dumps(unknown)),
            r"unknown\.json.*no-such-game",
        ),
        "cut short": (
            written(tmp_path, "short.json", json.dumps(short)),
            r"short\.json.*before the game does",
        ),
        "illegal action": (written(tmp_path, "illegal.json", json.dumps(illegal)), r"illegal\.json: step 3"),
    }
    for case, (path, expected) in cases.items():
        line = one_line_error(sixnimmt("view", "--no-open", str(path)))
        assert re.search(expected, line), (case, line)
        assert line.startswith("sixnimmt: error: "), (case, line)
    # One bad file among good ones: nothing is served.
    line = one_line_error(sixnimmt("view", "--no-open", str(game_file), str(tmp_path / "cut.json")))
    assert "cut.json" in line
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "holds no transcript" in one_line_error(sixnimmt("view", "--no-open", str(empty)))


def test_a_port_in_use_or_out_of_range_is_one_line(game_file: Path) -> None:
    for bad in ("70000", "-1", "http"):
        result = sixnimmt("view", "--no-open", "--port", bad, str(game_file))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "argument --port" in result.stderr.strip().splitlines()[-1]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(sixnimmt("view", "--no-open", "--port", str(port), str(game_file)))
    assert f"cannot listen on 127.0.0.1:{port}" in line


def test_without_jinja2_it_says_what_to_install(game_file: Path) -> None:
    """The base install has no Jinja2: ``view`` is listed as not installed and names its extra."""
    code = (
        "import sys; sys.modules['jinja2'] = None; from bot_sdk.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    for args in (["view", str(game_file)], ["view", "--help"]):
        result = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
        )
        line = one_line_error(result)
        assert line.endswith(
            "this command needs jinja2, which is not installed: pip install 'sixnimmt-arena[view]'"
        )
    result = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=60
    )
    assert re.search(
        r"^    view\s+\(not installed: pip install 'sixnimmt-arena\[view\]'\)", result.stdout, re.M
    )


WITHOUT_THE_SERVER = (
    "import sys\n"
    "for name in ('starlette', 'uvicorn', 'sqlalchemy', 'alembic', 'celery', 'prometheus_client'):\n"
    "    sys.modules[name] = None  # not importable: the viewer needs none of them\n"
    "from bot_sdk.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
"""``sixnimmt`` as on the base install with the ``view`` extra: Jinja2, none of the ``server`` extra."""


def test_it_serves_prints_json_opens_a_browser_and_stops_on_ctrl_c(game_file: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = written(tmp_path, "browser.sh", f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    env = dict(os.environ, BROWSER=str(browser))
    process = subprocess.Popen(
        [sys.executable, "-c", WITHOUT_THE_SERVER, "view", "--json", str(game_file.parent)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        shown = json.loads(process.stdout.readline())
        url = shown["url"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        assert [Path(g["file"]).name for g in shown["games"]] == ["game-0000.json", "game-0001.json"]
        first = shown["games"][0]
        transcript = json.loads(game_file.read_text())
        assert first["names"] == transcript["meta"]["seats"]
        assert first["steps"] == len(transcript["steps"])
        assert first["outcome"] == transcript["outcome"]
        assert first["url"] == f"{url}games/0"
        with urllib.request.urlopen(f"{url}api/games", timeout=10) as response:
            assert json.loads(response.read())["games"][1]["file"] == shown["games"][1]["file"]
        with urllib.request.urlopen(f"{url}games/1?step=2&seat=1", timeout=10) as response:
            page = response.read().decode()
            assert "script-src 'self'" in response.headers["content-security-policy"]
        assert 'id="step">2<' in page and 'aria-current="page">seat 1:' in page
        assert '<a id="prev-game" href="/games/0">' in page and "next-game" not in page
        elsewhere = urllib.request.Request(f"{url}api/games", headers={"Host": "attacker.example:80"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(elsewhere, timeout=10)
        assert refused.value.code == 400  # a page of another site, its name rebound to 127.0.0.1
        with urllib.request.urlopen(f"{url}api/games/0/transcript", timeout=10) as response:
            assert json.loads(response.read())["steps"] == transcript["steps"]
        _wait_for(lambda: opened.exists(), "the browser to be opened")
        assert opened.read_text().split() == [url]  # two games: their list
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err
    assert "ModuleNotFoundError" not in err
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}api/games", timeout=5)


def test_no_open_opens_nothing_and_prints_the_url(game_file: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = written(tmp_path, "browser.sh", f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    process = subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", "view", "--no-open", str(game_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, BROWSER=str(browser)), cwd=REPO,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/games/0", line)
        assert url, line
        with urllib.request.urlopen(url.group(0), timeout=10) as response:
            assert response.status == 200
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert not opened.exists()


def _wait_for(condition: Any, what: str, seconds: float = 20) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# -- the viewer's answers, in this process -------------------------------------------------------


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Viewer:
    """Every variant's game (three seats), and the anniversary game that plays every special card."""
    folder = tmp_path_factory.mktemp("variants")
    games = [played(cls.name) for cls in VARIANTS] + [anniversary_played()]
    for number, transcript in enumerate(games):
        (folder / f"{number:02d}.json").write_text(json.dumps(transcript.to_json()))
    return Viewer(load_games([folder]))


def get(viewer: Viewer, target: str) -> tuple[int, Any]:
    status, kind, body, _ = viewer.answer(target)
    return status, json.loads(body) if kind == "application/json" else body.decode()


def hidden(view: dict[str, Any]) -> set[int]:
    return set(next(view[k] for k in HIDDEN if k in view))


def test_every_page_of_every_variant_renders_and_a_seat_sees_only_its_own(viewer: Viewer) -> None:
    for game in viewer.games:
        steps = game.replay.steps
        status, everything = get(viewer, f"/api/games/{game.index}/replay")
        assert status == 200 and len(everything["frames"]) == steps + 1
        for seat in range(3):
            status, mine = get(viewer, f"/api/games/{game.index}/replay?seat={seat}")
            for frame, all_seen in zip(mine["frames"], everything["frames"], strict=True):
                assert "seats" not in frame and "actions" not in frame
                assert hidden(frame["view"]) == hidden(all_seen["seats"][seat])
        for step in sorted({0, 1, 2, steps // 2, steps}):
            for seat in (None, 0, 2):
                query = "" if seat is None else f"&seat={seat}"
                status, page = get(viewer, f"/games/{game.index}?step={step}{query}")
                assert status == 200, (game.path, step, seat)
                assert f'id="step">{step}<' in page
                if seat is not None:  # no card of another seat's hand anywhere on its page
                    seats = everything["frames"][step]["seats"]
                    others = set().union(*(hidden(seats[s]) for s in range(3) if s != seat))
                    shown = {int(c) for c in re.findall(r'data-card="(\d+)"', page)}
                    assert hidden(seats[seat]) <= shown, (game.path, step, seat)
                    assert not others & shown, (game.path, step, seat)


def test_bad_parameters_are_400s_and_unknown_ones_404s(viewer: Viewer) -> None:
    steps = viewer.games[0].replay.steps
    for target in ("/games/0?step=abc", "/games/0?step=-1", "/games/0?seat=x", "/games/0?step=1234567890",
                   "/api/games/0/replay?seat=1.5"):  # fmt: skip
        status, body = get(viewer, target)
        assert status == 400, target
        assert "abc" not in str(body) and "1.5" not in str(body)
    for target in (f"/games/0?step={steps + 1}", "/games/0?seat=3", "/games/99", "/games/x", "/nowhere",
                   "/static/../view.py", "/api/games/0/replay?seat=7", "/api/games/0/nothing"):  # fmt: skip
        status, body = get(viewer, target)
        assert status == 404, target
    status, body = get(viewer, "/api/games/99/replay")
    assert status == 404 and body == {
        "error": f"no game 99: there are {len(viewer.games)} games (0 to {len(viewer.games) - 1})"
    }
    status, body = get(viewer, "/")
    assert status == 200 and body.count("<tr data-game=") == len(viewer.games)
    status, _, css, _ = viewer.answer("/static/style.css")
    assert status == 200 and b"--accent" in css
