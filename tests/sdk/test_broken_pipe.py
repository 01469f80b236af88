"""Output into a pipe whose reader went away ends a command quietly, as it ends any Unix tool:
no "Broken pipe" message, no traceback, status 141 (128 + SIGPIPE); through real pipes."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import sixnimmt

CLOSED_PIPE = 128 + signal.SIGPIPE
PROGRESS = re.compile(r"sixnimmt: \d+/\d+ games \(\d+%\), .*")


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A long game's transcript: ten seats, twenty hands (its replay prints over 100 kB)."""
    where = tmp_path_factory.mktemp("pipe")
    bots = ",".join(["random"] * 10)
    options = ["-o", "target=None", "-o", "hands=20"]
    done = sixnimmt(where, "play", "--bots", bots, "--games", "1", *options, "--transcripts", "t", "--json")
    assert done.returncode == 0, done.stderr
    return where / "t" / "game-0000.json"


def _into_closed_pipe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sixnimmt ARGS`` writing into a pipe whose read end is closed before it starts."""
    read, write = os.pipe()
    os.close(read)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
        return subprocess.run(
            [sys.executable, "-m", "bot_sdk.cli", *args],
            cwd=cwd,
            env=env,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "{t}"],
        ["replay", "{t}", "--json"],
        ["verify", "{t}"],
        ["variants"],
        ["settings", "--json"],
        ["play", "--bots", "random,lowest", "--games", "2"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_closed_pipe_ends_every_printing_command_quietly(transcript: Path, args: list[str]) -> None:
    done = _into_closed_pipe(transcript.parent, *(a.format(t=transcript) for a in args))
    said = [line for line in done.stderr.splitlines() if not PROGRESS.fullmatch(line)]
    assert said == [], done.stderr  # nothing but play's progress lines (stderr is no terminal here)
    assert done.returncode == CLOSED_PIPE


def test_help_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    done = _into_closed_pipe(tmp_path, "--help")
    assert done.stderr == ""
    assert done.returncode in (0, CLOSED_PIPE)  # argparse drops a help text nobody reads


def test_replay_into_head_prints_the_first_line_and_nothing_on_stderr(transcript: Path) -> None:
    python, path = shlex.quote(sys.executable), shlex.quote(str(transcript))
    command = f"{python} -m bot_sdk.cli replay {path} | head -n 1"
    script = f"{command}; echo status ${{PIPESTATUS[0]}} >&2"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and "Hand 1 dealt" in lines[0]
    assert done.stderr == f"status {CLOSED_PIPE}\n"


def test_a_command_whose_output_is_read_still_exits_0(transcript: Path) -> None:
    done = sixnimmt(transcript.parent, "replay", str(transcript))
    assert done.returncode == 0 and done.stderr == ""
    assert len(done.stdout) > 100_000
