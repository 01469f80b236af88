"""Every table the SDK's commands print: headers, cells in line, nothing cut, no colour codes.

The commands run as real processes (stdout a pipe, as in a script or ``| less``); one test runs
the renderer on a pseudo-terminal to check that it then fits the terminal without cutting cells.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from testkit import read_until_closed, sixnimmt, table_rows

from referee.clikit import tables

PROJECT = Path(__file__).resolve().parents[2]
ONE_HAND = ["-o", "hands=1"]


def run(tmp_path: Path, *argv: str) -> str:
    done = sixnimmt(tmp_path, *argv)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout, "no terminal codes when stdout is not a terminal"
    return done.stdout


def test_version(tmp_path: Path) -> None:
    assert run(tmp_path, "--version") == f"sixnimmt {version('sixnimmt-arena')}\n"


def test_variants_table(tmp_path: Path) -> None:
    variants = json.loads(run(tmp_path, "variants", "--json"))
    text = run(tmp_path, "variants")
    headers = ["variant", "aliases", "score", "option", "default", "range", "meaning"]
    rows = table_rows(text, headers, sum(len(v["options"]) for v in variants))
    options = [(v, o) for v in variants for o in v["options"]]
    for row, (variant, option) in zip(rows, options, strict=True):
        assert row["option"] == option["name"]  # whole: attach_ascending_cards is not cut
        assert row["meaning"] == option["doc"]
        if option is variant["options"][0]:
            assert row["variant"] == variant["name"]
            assert row["aliases"] == ", ".join(variant["aliases"])
            assert row["score"] == ("higher" if variant["higher_is_better"] else "lower") + " is better"
        else:
            assert row["variant"] == row["score"] == ""
    board = next(r for r in rows if r["option"] == "board")
    assert board["default"] == '""'
    hands = next(r for r in rows if r["option"] == "hands")
    assert (hands["default"], hands["range"]) == ("none", "1…10000")


def test_settings_table(tmp_path: Path) -> None:
    settings = json.loads(run(tmp_path, "settings", "--json"))
    rows = table_rows(run(tmp_path, "settings"), ["variable", "value", "default", "meaning"], len(settings))
    assert [r["variable"] for r in rows] == [s["variable"] for s in settings]
    assert [r["meaning"] for r in rows] == [s["doc"] for s in settings]
    decision = next(r for r in rows if r["variable"] == "SIXNIMMT_DECISION_MS")
    assert decision["value"] == decision["default"] == "2000"


def test_play_names_the_options_and_gives_intervals(tmp_path: Path) -> None:
    argv = ["play", "--bots", "random,heuristic,lowest", "--games", "5", *ONE_HAND]
    seats = json.loads(run(tmp_path, *argv, "--json"))["seats"]
    text = run(tmp_path, *argv)
    assert text.splitlines()[0] == (
        "5 games in this process: classic, players=3 hands=1 (other options at their defaults);"
        " score: lower is better"
    )
    rows = table_rows(text, ["seat", "bot", "mean score", "95% interval", "wins"], 3)
    for row, seat in zip(rows, seats, strict=True):
        low, high = seat["interval95"]
        assert low < seat["mean_score"] < high
        assert row == {
            "seat": str(seat["seat"]),
            "bot": seat["bot"],
            "mean score": f"{seat['mean_score']:.2f}",
            "95% interval": f"[{low:.2f}, {high:.2f}]",
            "wins": str(seat["wins"]),
        }


def test_one_game_is_too_few_for_an_interval(tmp_path: Path) -> None:
    argv = ["play", "--bots", "random,heuristic", "--games", "1", "--variant", "board"]
    assert all(s["interval95"] is None for s in json.loads(run(tmp_path, *argv, "--json"))["seats"])
    text = run(tmp_path, *argv)
    assert "1 game in this process: board, players=2 (other options at their defaults)" in text
    assert "score: higher is better" in text
    rows = table_rows(text, ["seat", "bot", "mean score", "95% interval", "wins"], 2)
    assert [r["95% interval"] for r in rows] == ["too few games"] * 2


def test_arena_table(tmp_path: Path) -> None:
    argv = ["arena", "--in-process", "--processes", "1", "--bots", "random,heuristic,lowest", "--table", "3"]
    argv += ["--deals", "2", *ONE_HAND]
    standings = json.loads(run(tmp_path, *argv, "--json"))["standings"]
    text = run(tmp_path, *argv)
    assert "classic, players=3 hands=1" in text.splitlines()[0] and "lower is better" in text
    headers = ["#", "bot", "games", "mean score", "95% interval", "mean rank", "wins", "faults"]
    rows = table_rows(text, headers, 3)
    for place, (row, s) in enumerate(zip(rows, standings, strict=True), 1):
        low, high = s["interval95"]
        assert (row["#"], row["bot"], row["games"]) == (str(place), s["name"], str(s["games"]))
        assert row["95% interval"] == f"[{low:.2f}, {high:.2f}]"


def test_bot_play_gives_the_options_and_an_interval(tmp_path: Path) -> None:
    argv = ["bot", "play", "random", "--against", "heuristic", "--games", "4", *ONE_HAND]
    entrants = json.loads(run(tmp_path, *argv, "--json"))["entrants"]
    text = run(tmp_path, *argv)
    assert text.splitlines()[0] == (
        "4 games, every bot its own process: classic, players=2 hands=1 (other options at their defaults);"
        " score: lower is better"
    )
    headers = ["bot", "games", "mean score", "95% interval", "mean rank", "wins", "faults"]
    rows = table_rows(text, headers, 2)
    for row, entrant in zip(rows, entrants, strict=True):
        low, high = entrant["interval95"]
        assert row["bot"] == entrant["name"] and row["games"] == "4" and row["faults"] == "none"
        assert row["mean score"] == f"{entrant['mean_score']:.2f}"
        assert row["95% interval"] == f"[{low:.2f}, {high:.2f}]"
    one = run(tmp_path, "bot", "play", "random", "--against", "heuristic", "--games", "1", *ONE_HAND)
    assert [r["95% interval"] for r in table_rows(one, headers, 2)] == ["too few games"] * 2


def test_bot_check_table(tmp_path: Path) -> None:
    text = run(tmp_path, "bot", "check", "heuristic", "--games", "2", *ONE_HAND)
    rows = table_rows(text, ["result", "check"], 8)
    assert {r["result"] for r in rows} == {"PASS"}
    assert "decides without raising" in [r["check"] for r in rows]


def test_cells_are_text_never_markup() -> None:
    text = tables.render(["bot", tables.right("n")], [["[bold]x[/bold]", 1], ["[red]", None]])
    assert table_rows(text, ["bot", "n"], 2) == [
        {"bot": "[bold]x[/bold]", "n": "1"},
        {"bot": "[red]", "n": "-"},
    ]


def test_off_a_terminal_no_cell_is_cut_or_wrapped() -> None:
    long = "word " * 60
    text = tables.render(["a", "b"], [["x", long.strip()], ["y", "z"]])
    assert table_rows(text, ["a", "b"], 2)[0]["b"] == long.strip()
    assert len(text.splitlines()) == 4


def test_rows_must_fit_the_columns() -> None:
    with pytest.raises(ValueError, match="a row of 1 cells for 2 columns"):
        tables.render(["a", "b"], [["x"]])


def test_on_a_terminal_the_table_fits_and_wraps_without_cutting() -> None:
    script = (
        "from referee.clikit.tables import print_table\n"
        "print_table(['bot', 'reason'], [['a_bot_with_a_long_name', 'the quick brown fox jumps over the lazy"
        " dog ' * 3]])\n"
    )
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "40", "LINES": "20", "TERM": "xterm"}
    with subprocess.Popen([sys.executable, "-c", script], stdout=terminal, cwd=PROJECT, env=env) as process:
        os.close(terminal)
        output = read_until_closed(controller)
        assert process.wait(timeout=60) == 0
    os.close(controller)
    text = re.sub(r"\x1b\[[0-9;]*m", "", output.decode()).replace("\r", "")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= 40, text
    column = lines[0].index("reason")
    assert lines[0][:column].strip() == "bot"
    assert "".join(line[:column].strip() for line in lines[2:]) == "a_bot_with_a_long_name", text
    said = " ".join(line[column:].strip() for line in lines[2:])
    assert said == ("the quick brown fox jumps over the lazy dog " * 3).strip(), text
