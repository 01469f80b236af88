"""``bot play`` and ``bot check`` say why a bot faulted: each distinct traceback once, with its count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot_sdk.cli import main

RAISER = """
from bot_sdk import ClassicBot

class Raiser(ClassicBot):
    def choose_card(self, view):
        if len(view.hand) % 2 == 0:
            raise ValueError("even hands are unlucky")
        return view.hand[0]
"""
ONE_HAND = ["-o", "hands=1", "-o", "target=None"]


def test_bot_play_shows_each_traceback_once_with_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "raiser.py"
    bot.write_text(RAISER)
    argv = ["bot", "play", str(bot), "--against", "random", "--games", "2", *ONE_HAND]
    assert main([*argv, "--json"]) == 0
    (row, _) = json.loads(capsys.readouterr().out)["entrants"]
    # Hands of 10, 8, 6, 4 and 2 cards raise: five a game.
    assert row["faults"] == {"exception": 10}
    ((reason),) = row["fault_reasons"]
    assert (reason["kind"], reason["count"]) == ("exception", 10)
    assert reason["reason"].endswith("ValueError: even hands are unlucky")
    assert "bot_sdk" not in reason["reason"]  # the SDK's own frames say nothing to the author
    assert row["exit"]["status"] == 0

    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("ValueError: even hands are unlucky") == 1
    assert re.search(r"^  exception ×10:$", out, re.MULTILINE)
    assert 'raiser.py", line 7, in choose_card' in out


def test_bot_check_says_what_went_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "raiser.py"
    bot.write_text(RAISER)
    assert main(["bot", "check", str(bot), "--games", "2", *ONE_HAND]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^FAIL +decides without raising$", out, re.MULTILINE)
    assert re.search(r"^result +check$", out, re.MULTILINE)
    assert "what went wrong:\n  exception ×10: Traceback" in out
    assert main(["bot", "check", str(bot), "--games", "2", *ONE_HAND, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["fault_reasons"][0]["count"] == 10 and report["exit"]["how"] == "exited with status 0"


# Plays a card it does not hold, a different one each time: one bug, one group.
ILLEGAL = """
from bot_sdk import ClassicBot

class Illegal(ClassicBot):
    def choose_card(self, view):
        return view.hand[0] + 200
"""
# Never answers a card decision.
SLEEPER = """
import time
from bot_sdk import ClassicBot

class Sleeper(ClassicBot):
    def choose_card(self, view):
        time.sleep(3600)
"""


def test_bot_play_groups_one_bug_into_one_cause_with_an_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "illegal.py"
    bot.write_text(ILLEGAL)
    argv = ["bot", "play", str(bot), "--against", "random", "--games", "2", *ONE_HAND]
    assert main([*argv, "--json"]) == 0
    (row, _) = json.loads(capsys.readouterr().out)["entrants"]
    assert row["faults"] == {"illegal": 20}
    ((group),) = row["fault_reasons"]
    assert (group["kind"], group["count"]) == ("illegal", 20) and group["distinct"] > 1
    assert re.fullmatch(r"2\d\d is not a legal card decision \(options: .*\)", group["reason"])
    assert group["cause"] == "# is not a legal card decision (options: #)"
    # Every decision is counted: its 20 card decisions defaulted, and its row decisions (if any) played.
    assert row["decisions"] == row["played"] + row["defaulted"] and row["defaulted"] == 20

    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^  illegal ×20, for example:\n    2\d\d is not a legal card decision", out, re.MULTILINE
    )
    assert out.count("is not a legal card decision") == 1


def test_bot_check_counts_every_decision_and_times_only_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "illegal.py"
    bot.write_text(ILLEGAL)
    assert main(["bot", "check", str(bot), "--games", "2", *ONE_HAND, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["faults"] == {"illegal": 20}
    assert report["decisions"] == report["played"] + report["defaulted"] >= 20
    assert report["timed_decisions"] == report["decisions"]  # every one answered, illegal or not
    assert report["think_ms_per_decision"] is not None
    ((group),) = report["fault_reasons"]
    assert group["count"] == 20
    assert main(["bot", "check", str(bot), "--games", "2", *ONE_HAND]) == 1
    out = capsys.readouterr().out
    assert re.search(
        r"^\d+ decisions \(\d+ played, 20 defaulted\), [\d.]+ ms each on average over \d+ answered$",
        out,
        re.M,
    )
    assert "what went wrong:\n  illegal ×20, for example: 2" in out


def test_bot_check_of_a_bot_that_never_answers_times_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every decision counted, none timed: no figure made of the waits for answers that never came.
    bot = tmp_path / "sleeper.py"
    bot.write_text(SLEEPER)
    argv = ["bot", "check", str(bot), "--games", "1", "--decision-ms", "100", "--bank-ms", "0", *ONE_HAND]
    assert main([*argv, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] >= report["faults"]["timeout"] >= 1
    assert report["think_ms_per_decision"] is None and report["timed_decisions"] == 0
    assert main(argv) == 1
    assert re.search(
        r"^\d+ decisions \(0 played, \d+ defaulted\), none answered in time", capsys.readouterr().out, re.M
    )
