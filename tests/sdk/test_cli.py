"""The command line: every command runs, prints JSON on --json, and fails clearly on bad input."""

from __future__ import annotations

import json
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
        (["play", "--bots", "random,random", "-o", "players=11"], "players must be between 2 and 10"),
        (["play", "--bots", "random,random", "-o", "colour=blue"], "unknown ClassicConfig option"),
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
