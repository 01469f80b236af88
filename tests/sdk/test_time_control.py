"""One time control everywhere: ``bot play``, ``bot check`` and a submission's check give the
league's decision time and time bank (``SIXNIMMT_DECISION_MS``, ``SIXNIMMT_BANK_MS``), and say it.

Real processes: a referee and every bot its own process (the submission's sandboxed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine

from bot_sdk.cli import main
from workers.bots.artifacts import SubmissionError
from workers.bots.submit import submit
from workers.store.engine import make_engine
from workers.store.migrate import upgrade

# Loads for 2.5 s at its first decision (more than a decision's 2 s, less than 2 s + the 10 s
# bank), then answers at once.
SLOW_START = """
import time
from bot_sdk import ClassicBot

LOADED = False

class SlowStart(ClassicBot):
    def choose_card(self, view):
        global LOADED
        if not LOADED:
            time.sleep(2.5)
            LOADED = True
        return view.hand[0]
"""
# Always slower than its decision time: the bank runs out and it times out.
ALWAYS_SLOW = """
import time
from bot_sdk import ClassicBot

class AlwaysSlow(ClassicBot):
    def choose_card(self, view):
        time.sleep(0.5)
        return view.hand[0]
"""
ONE_HAND = ["-o", "hands=1", "-o", "target=None"]
DEFAULT_LINE = "time control: 2000 ms a decision + 10000 ms bank"


@pytest.fixture(autouse=True)
def league_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIXNIMMT_DECISION_MS", raising=False)
    monkeypatch.delenv("SIXNIMMT_BANK_MS", raising=False)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_bot_that_loads_at_its_first_decision_passes_bot_play_and_bot_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = str(write(tmp_path, "slowstart.py", SLOW_START))
    play = ["bot", "play", bot, "--against", "random", "--games", "2", *ONE_HAND]
    assert main(play) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^{re.escape(DEFAULT_LINE)}$", out, re.MULTILINE)
    assert re.search(r"^slowstart +2 .* none$", out, re.MULTILINE), out

    assert main(["bot", "check", bot, "--games", "2", *ONE_HAND]) == 0
    out = capsys.readouterr().out
    assert out.startswith(DEFAULT_LINE + "\n")
    assert re.search(r"^PASS +answers in time$", out, re.MULTILINE)

    assert main(["bot", "check", bot, "--games", "2", *ONE_HAND, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["time_control"] == {"decision_ms": 2000, "bank_ms": 10000}
    assert report["faults"] == {}


def test_a_bot_that_loads_at_its_first_decision_passes_the_submission_check(tmp_path: Path) -> None:
    engine: Engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    _, created, report = submit(
        engine, write(tmp_path, "slowstart.py", SLOW_START), "slowstart", games=2
    )
    assert created and report.ok
    assert report.time_control == {"decision_ms": 2000, "bank_ms": 10000}


def test_an_always_slow_bot_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The league's settings are the commands' defaults: a short clock makes the test quick.
    monkeypatch.setenv("SIXNIMMT_DECISION_MS", "300")
    monkeypatch.setenv("SIXNIMMT_BANK_MS", "300")
    bot = str(write(tmp_path, "alwaysslow.py", ALWAYS_SLOW))
    assert main(["bot", "check", bot, "--games", "2", *ONE_HAND]) == 1
    out = capsys.readouterr().out
    assert out.startswith("time control: 300 ms a decision + 300 ms bank\n")
    assert re.search(r"^FAIL +answers in time$", out, re.MULTILINE)

    assert main(["bot", "play", bot, "--against", "random", "--games", "2", *ONE_HAND, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["time_control"] == {"decision_ms": 300, "bank_ms": 300}
    assert result["entrants"][0]["faults"]["timeout"] >= 2

    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    with pytest.raises(
        SubmissionError, match=r"answers in time; time control: 300 ms a decision \+ 300 ms bank"
    ):
        submit(engine, Path(bot), "alwaysslow", games=2)


def test_league_create_and_bot_submit_say_the_time_control(tmp_path: Path) -> None:
    from testkit import sixnimmt

    slow = {"SIXNIMMT_DECISION_MS": "1500", "SIXNIMMT_BANK_MS": "7000"}
    created = sixnimmt(tmp_path, "league", "create", "tc", "--bots", "random,heuristic,lowest,mc", env=slow)
    assert created.returncode == 0, created.stderr
    assert "time control: 1500 ms a decision + 7000 ms bank" in created.stdout
    shown = sixnimmt(tmp_path, "league", "create", "tc2", "--bots", "random,heuristic,lowest,mc", "--json")
    assert json.loads(shown.stdout)["time_control"] == {"decision_ms": 2000, "bank_ms": 10000}
    bot = tmp_path / "slow_start.py"
    bot.write_text(SLOW_START)
    stored = sixnimmt(tmp_path, "bot", "submit", str(bot), "--name", "slowstart", env=slow)
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.startswith("time control: 1500 ms a decision + 7000 ms bank\n")
