"""Progress off a terminal: a plain line on stderr every few percent (a pipe, a log, CI), none with
--json, and the bar (no lines) on a terminal; through the command line as a subprocess."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from testkit import read_until_closed, sixnimmt

from referee.clikit.progress import STEP_PERCENT, ProgressLines

LINE = re.compile(r"sixnimmt: (\d+)/(\d+) (\w+) \((\d+)%\), \d+:\d\d elapsed(?:, about \d+:\d\d left)?")


def _progress(stderr: str) -> list[tuple[int, int, str, int]]:
    found = []
    for line in stderr.splitlines():
        match = LINE.fullmatch(line)
        assert match, f"not a progress line: {line!r} in:\n{stderr}"
        n, total, unit, percent = match.groups()
        found.append((int(n), int(total), unit, int(percent)))
    return found


def test_play_into_a_pipe_prints_a_line_every_few_percent(tmp_path: Path) -> None:
    done = sixnimmt(tmp_path, "play", "--bots", "random,lowest", "--games", "40")
    assert done.returncode == 0, done.stderr
    lines = _progress(done.stderr)
    # 40 games: every 5% is every 2 games, each line once, in order, the last one at 100%.
    assert [(n, percent) for n, _, _, percent in lines] == [(2 * k, 5 * k) for k in range(1, 21)]
    assert {(total, unit) for _, total, unit, _ in lines} == {(40, "games")}
    assert "left" not in done.stderr.splitlines()[-1]
    assert "random" in done.stdout and "sixnimmt: " not in done.stdout  # the results stay on stdout


@pytest.mark.parametrize("mode", [["--in-process"], []])
def test_arena_into_a_pipe_counts_its_games(tmp_path: Path, mode: list[str]) -> None:
    done = sixnimmt(tmp_path, "arena", "--bots", "random,lowest,highest", "--table", "2", *mode)
    assert done.returncode == 0, done.stderr
    lines = _progress(done.stderr)
    assert lines[-1] == (12, 12, "games", 100)  # three tables of two, two deals each, two rotations
    assert [n for n, *_ in lines] == sorted({n for n, *_ in lines})  # each count once, in order


def test_json_prints_no_progress(tmp_path: Path) -> None:
    done = sixnimmt(tmp_path, "play", "--bots", "random,lowest", "--games", "40", "--json")
    assert done.returncode == 0 and done.stderr == ""


def test_on_a_terminal_the_bar_and_no_lines(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 0 columns: no bar
    command = [sys.executable, "-m", "bot_sdk.cli", "play", "--bots", "random,lowest", "--games", "40"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=terminal, cwd=tmp_path, env=env
    ) as child:
        os.close(terminal)
        shown = read_until_closed(controller)
        assert child.wait(timeout=120) == 0
    os.close(controller)
    text = shown.decode(errors="replace")
    assert "games" in text and "\r" in text  # tqdm's bar, redrawn in place
    assert not LINE.search(text)


def test_lines_follow_a_total_that_grows() -> None:
    out = io.StringIO()
    lines = ProgressLines(10, "blocks", out)
    for _ in range(10):
        lines.update(1)
    lines.total += 10  # an adaptive league adds a round
    lines.refresh()
    lines.update(1)
    lines.update(9)
    shown = _progress(out.getvalue())
    assert [(n, total) for n, total, _, _ in shown] == [(k, 10) for k in range(1, 11)] + [(11, 20), (20, 20)]
    assert 100 // STEP_PERCENT >= 10  # a step is at most a tenth: ten updates of a tenth, ten lines


def test_messages_go_between_the_lines() -> None:
    out = io.StringIO()
    with ProgressLines(2, "blocks", out) as lines:
        lines.update(1)
        lines.write("sixnimmt: broker unreachable")
        lines.update(1)
    assert out.getvalue().splitlines()[1] == "sixnimmt: broker unreachable"
