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
