"""The command line: every command runs, prints JSON on --json, and fails clearly on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot_sdk import cli
from bot_sdk.cli import main
from referee.clikit.options import parse_options

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "cautious_bot.py")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_variants_json_lists_classic_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "variants", "--json")
    assert code == 0
    variants = {v["name"]: v for v in json.loads(out)}
    options = {o["name"]: o for o in variants["classic"]["options"]}
    assert options["players"]["min"] == 2 and options["players"]["max"] == 10
    assert options["target"]["default"] == 66


def test_play_json_is_deterministic_and_writes_verifiable_transcripts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["play", "--bots", f"{EXAMPLE},random,heuristic", "--games", "3", "--seed", "5", "--json"]
    code, out, _ = run(capsys, *argv, "--transcripts", str(tmp_path))
    assert code == 0
    first = json.loads(out)
    assert [s["bot"] for s in first["seats"]] == ["cautious_bot", "random", "heuristic"]
    assert len(first["digests"]) == 3
    _, again, _ = run(capsys, *argv)
    assert json.loads(again)["digests"] == first["digests"]
    files = sorted(tmp_path.glob("game-*.json"))
    assert len(files) == 3
    code, out, _ = run(capsys, "verify", str(files[0]), "--json")
    assert code == 0 and json.loads(out)["digest"] == first["digests"][0]
    code, out, _ = run(capsys, "replay", str(files[0]), "--json")
    steps = json.loads(out)
    assert steps[0][0]["type"] == "HandDealt"


def test_verify_rejects_a_tampered_transcript(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run(capsys, "play", "--bots", "random,random", "--games", "1", "--transcripts", str(tmp_path), "--json")
    path = next(tmp_path.glob("game-*.json"))
    data = json.loads(path.read_text())
    data["outcome"]["scores"][0] += 1
    path.write_text(json.dumps(data))
    code, _, err = run(capsys, "verify", str(path))
    assert code == 2
    assert "claimed outcome" in err


@pytest.mark.parametrize("mode", [[], ["--in-process"]])
def test_arena_json_standings(capsys: pytest.CaptureFixture[str], mode: list[str]) -> None:
    code, out, _ = run(
        capsys,
        "arena",
        "--bots",
        "random,lowest,heuristic",
        "--table",
        "3",
        "--deals",
        "2",
        "--processes",
        "1",
        "-o",
        "hands=1",
        "-o",
        "target=None",
        *mode,
        "--json",
    )
    assert code == 0
    result = json.loads(out)
    assert result["games"] == 2 * 3  # one table, two deals, three rotations each
    names = [s["name"] for s in result["standings"]]
    assert sorted(names) == ["heuristic", "lowest", "random"]
    for line in result["standings"]:
        low, high = line["interval95"]
        assert low <= line["mean_score"] <= high
        assert line["games"] == 6


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--bots", "nosuchbot,random"], "unknown bot 'nosuchbot'"),
        (["play", "--bots", "random,random", "-o", "players=11"], "-o players=… must be between 2 and 10"),
        (["play", "--bots", "random,random", "-o", "colour=blue"], "unknown option -o colour=…; known:"),
        (["play", "--bots", "random,random", "-o", "target=abc"], "-o target=… must be an integer"),
        (["play", "--bots", "random,random", "--variant", "chess"], "unsupported variant"),
        (["play", "--bots", "missing.py,random"], "no bot file"),
        (["verify", "/nonexistent/transcript.json"], "No such file"),
    ],
)
def test_bad_input_gives_a_clear_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert out == ""


@pytest.mark.parametrize(
    ("variant", "bots", "players"),
    [("classic", "random,heuristic", 3), ("board", "random,random,random", 2), ("junior", "random", 4)],
)
def test_play_with_fewer_or_more_bots_than_players_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], variant: str, bots: str, players: int
) -> None:
    """Issue 31: ``play --bots random,heuristic -o players=3`` ended in a ValueError traceback."""
    code, out, err = run(capsys, "play", "--variant", variant, "--bots", bots, "-o", f"players={players}")
    given = len(bots.split(","))
    assert (code, out) == (2, "")
    assert err == f"sixnimmt: error: -o players={players} needs {players} bots; --bots gave {given}\n"


def test_play_prints_the_stack_trace_of_a_bot_that_raises(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The README promises a stack trace when your bot raises: the bot's frames, then one line."""
    bot = tmp_path / "raiser.py"
    bot.write_text(
        "from games.classic.sdk import ClassicBot\n"
        "\n"
        "class Raiser(ClassicBot):\n"
        "    def choose_card(self, view):\n"
        "        return self.helper(view)\n"
        "\n"
        "    def helper(self, view):\n"
        "        raise ValueError('my bug')\n"
    )
    code, _, err = run(capsys, "play", "--bots", f"{bot},random", "--games", "1")
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert f'File "{bot}", line 5, in choose_card' in err
    assert f'File "{bot}", line 8, in helper' in err
    assert "bot_sdk/play.py" not in err, "the trace starts at the bot's decide, not in the arena"
    assert lines[-2] == "ValueError: my bug"
    assert lines[-1].startswith("sixnimmt: error: raiser raised ValueError('my bug') in match seed ")


def test_a_bot_that_answers_illegally_is_one_line_without_a_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bot = tmp_path / "illegal.py"
    bot.write_text(
        "from games.classic.sdk import ClassicBot\n"
        "\n"
        "class Illegal(ClassicBot):\n"
        "    def choose_card(self, view):\n"
        "        return 105\n"
    )
    code, _, err = run(capsys, "play", "--bots", f"{bot},random", "--games", "1")
    assert code == 2
    assert err.count("\n") == 1 and "illegal answered 105 to a card decision" in err


@pytest.mark.parametrize(
    ("argv", "options"),
    [
        (["play"], {"--games": "(default: 10; 1 with --human)"}),
        (["bot", "run"], {"--variant": "(default: classic)", "--referee": "$SIXNIMMT_REFEREE",
                          "--token": "$SIXNIMMT_TOKEN"}),
        (["bot", "connect"], {"--variant": "(default: classic)"}),
    ],
)  # fmt: skip
def test_the_sdk_commands_options_have_help_with_their_defaults(
    capsys: pytest.CaptureFixture[str], argv: list[str], options: dict[str, str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help over lines
    for name, words in options.items():
        own_help = r"(?:(?! --?\w).)*?"  # up to the next option's name
        assert re.search(rf"{re.escape(name)} \S+ {own_help}{re.escape(words)}", text), (name, text)


def test_parse_options_reads_json_values() -> None:
    assert parse_options(["target=None", "professional=true", "players=5", "name=x"]) == {
        "target": None,
        "professional": True,
        "players": 5,
        "name": "x",
    }


def test_a_plugin_command_loads_only_its_plugin_and_others_load_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``sixnimmt referee …`` loads the referee's plugin alone; a command no plugin is named
    after (``bot`` joins several) and the top-level help load every plugin."""
    from importlib.metadata import entry_points

    loaded: list[str] = []

    class Counted:
        def __init__(self, entry: Any) -> None:
            self.name, self._entry = entry.name, entry

        def load(self) -> Any:
            loaded.append(self.name)
            return self._entry.load()

    installed = [Counted(e) for e in entry_points(group="sixnimmt.commands")]
    monkeypatch.setattr(cli, "entry_points", lambda group: list(installed))
    every = sorted(e.name for e in installed)
    cli.build_parser("referee")
    assert loaded == ["referee"]
    for command in ("bot", "worker", None):
        loaded.clear()
        parser = cli.build_parser(command)
        assert sorted(loaded) == every, command
    bot = parser.parse_args(["bot", "play", "random"])  # a plugin's command in the SDK's group
    assert bot.func.__module__ == "arena.cli"


def test_the_readme_says_choose_row_returns_a_row_index() -> None:
    """Issue 31: the README did not say what ``choose_row`` returns; it is an index into ``view.rows``."""
    from games.classic.rules.classic import Classic, ClassicConfig
    from referee.rules.core import DecisionKind

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert "`choose_row` (optional) returns the index of the row a low card takes, counted from 0" in readme
    variant = Classic(ClassicConfig(players=2))
    state = variant.position(rows=[(10,), (20,), (30,), (40,)], hands=[(1, 50), (60, 70)])
    state, _ = variant.apply(state, {0: 1, 1: 60})
    (decision,) = variant.pending(state)
    assert decision.kind is DecisionKind.ROW
    assert decision.options == tuple(range(len(variant.view(state, 0).rows)))
