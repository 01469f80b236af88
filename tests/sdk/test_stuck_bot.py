"""A bot that stopped answering is stopped when its games are over (SIGTERM, a short grace, then
SIGKILL), not waited for through the goodbye grace of bots that answer.

Real processes: ``sixnimmt bot play`` with a referee and every bot its own process.
"""

from __future__ import annotations

import json
from pathlib import Path

from testkit import sixnimmt

# Sleeps through its first card decision; told to stop with SIGTERM, it says so and exits.
SLEEPER = """
import os
import signal
import time
from pathlib import Path

from bot_sdk import ClassicBot

class Sleeper(ClassicBot):
    def choose_card(self, view):
        def told(signum, frame):
            Path({stopped!r}).write_text(signal.Signals(signum).name)
            os._exit(15)

        signal.signal(signal.SIGTERM, told)
        time.sleep(3600)
"""


def test_bot_play_stops_a_sleeping_bot_when_its_games_are_over(tmp_path: Path) -> None:
    stopped = tmp_path / "stopped.txt"
    (tmp_path / "sleeper.py").write_text(SLEEPER.format(stopped=str(stopped)))
    # The deadline of sixnimmt() (600 s) only keeps a regression from hanging the suite.
    done = sixnimmt(
        tmp_path,
        *("bot", "play", "sleeper.py", "--against", "random", "--games", "2", "--json"),
        *("--decision-ms", "100", "--bank-ms", "0", "-o", "hands=1", "-o", "target=None"),
    )
    assert done.returncode == 0, done.stderr
    sleeper, rand = json.loads(done.stdout)["entrants"]
    assert sleeper["faults"]["timeout"] >= 1
    # It was sent SIGTERM when its games were over (before, it was waited for, then SIGKILLed).
    assert stopped.read_text() == "SIGTERM"
    assert sleeper["exit"]["status"] == 15 and sleeper["exit_code"] is None
    assert sleeper["exit"]["limit"] == "stopped when its games were over: it had timed out"
    # The bot that answered ended on its own after its goodbye.
    assert rand["exit"]["status"] == 0 and rand["exit_code"] == 0
