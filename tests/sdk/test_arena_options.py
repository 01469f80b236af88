"""``sixnimmt arena``'s table size and options: ``-o players=N`` is the table size or an error,
never a smaller game than asked for; every option says what it does and its default."""

from __future__ import annotations

import json

import pytest

from bot_sdk.cli import main

QUICK = ["--in-process", "--processes", "1", "--deals", "1", "-o", "hands=1", "-o", "target=None"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bots", "random,lowest", "-o", "players=3"], "-o players=3 needs at least 3 bots, 2 given"),
        (
            ["--bots", "random,lowest,highest", "--table", "2", "-o", "players=3"],
            "--table 2 and -o players=3 disagree: give one of them",
        ),
        (["--bots", "random,lowest", "-o", "players=two"], "-o players must be a whole number of players"),
    ],
    ids=["more players than bots", "table disagrees", "not a number"],
)
def test_arena_refuses_players_it_cannot_seat(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", *argv, *QUICK]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"sixnimmt: error: {message}\n" or (
        captured.err.startswith(f"sixnimmt: error: {message}") and captured.err.count("\n") == 1
    )


def test_arena_plays_the_players_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    # Four bots and 3-player tables: -o players is the table size (it was 4 a table, the option ignored).
    assert (
        main(["arena", "--bots", "random,lowest,highest,heuristic", "-o", "players=3", *QUICK, "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["table_size"] == 3


@pytest.mark.parametrize("command", [["arena"], ["bot", "play"], ["bot", "check"]])
def test_every_option_says_what_it_does_and_its_default(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    # Each option's entry: its line (two spaces, then a dash) and the lines indented under it.
    entries: dict[str, str] = {}
    for line in capsys.readouterr().out.split("options:", 1)[1].splitlines():
        if line.startswith("  -"):
            name = line.split()[0].rstrip(",")
            entries[name] = line
        elif entries and line.startswith("   "):
            entries[name] += " " + line.strip()
    assert {"--variant", "--seed", "--json"} <= entries.keys()
    options = ("--bots", "--against", "--games", "--deals", "--decision-ms", "--bank-ms", "--table")
    for option in (*options, "--variant", "--seed", "--processes"):
        if option in entries:
            assert "default" in entries[option], entries[option]
