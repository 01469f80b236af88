"""Bots in any language: ``--cmd`` and ``bot.toml`` in bot play, bot check, arena and a league.

The JavaScript bot (examples/node_bot, built by ``make node``, which ``make test`` runs first)
plays the reference bots through ``bot check`` and in a league, every bot sandboxed; a bad
command, a malformed bot.toml and a program that exits at once each stop with one line and
store nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import func, select
from testkit import default_store, sixnimmt

from arena.matches import local_referee, spawn_bot
from workers.sandbox import Sandbox

PROJECT = Path(__file__).resolve().parents[2]
NODE_BOT = PROJECT / "examples" / "node_bot"
FAST = ("-o", "hands=1", "-o", "target=None")


@pytest.fixture(scope="module")
def node_bot() -> Path:
    """The built example; missing, the test fails and says how to build it (never a skip)."""
    if not (NODE_BOT / "dist" / "bot.js").is_file() or not (NODE_BOT / "node_modules").is_dir():
        pytest.fail("examples/node_bot is not built: run `make node` (npm ci and npm run build)")
    return NODE_BOT


def one_line(stderr: str) -> str:
    """The one error line of a command that failed (and no traceback)."""
    errors = [line for line in stderr.splitlines() if line.startswith("sixnimmt: error")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def bot_dir(tmp_path: Path, name: str, toml: str, files: dict[str, str] | None = None) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "bot.toml").write_text(textwrap.dedent(toml))
    for file, text in (files or {}).items():
        (directory / file).write_text(textwrap.dedent(text))
    return directory


# -- the Node bot against the reference bots -------------------------------------------------------


@pytest.mark.slow
def test_the_node_bot_passes_bot_check_by_its_directory_and_by_cmd(node_bot: Path, tmp_path: Path) -> None:
    by_dir = sixnimmt(PROJECT, "bot", "check", str(node_bot), "--games", "6", *FAST, "--json")
    assert by_dir.returncode == 0, by_dir.stderr
    report = json.loads(by_dir.stdout)
    assert report["ok"] and report["games"] == 6 and report["faults"] == {}
    assert report["exit"]["status"] == 0 and "node_bot: 6 games" in report["exit"]["stderr"]
    # --cmd runs in the current directory: the bundle by its path, and the unbundled source too.
    for command in ("node examples/node_bot/dist/bot.js", "node examples/node_bot/bot.js"):
        by_cmd = sixnimmt(PROJECT, "bot", "check", "--cmd", command, "--games", "4", *FAST, "--json")
        assert by_cmd.returncode == 0, by_cmd.stderr
        assert json.loads(by_cmd.stdout)["ok"]


@pytest.mark.slow
def test_bot_play_and_arena_seat_the_node_bot_against_reference_bots(node_bot: Path) -> None:
    played = sixnimmt(
        PROJECT, "bot", "play", "--cmd", "node examples/node_bot/dist/bot.js",
        "--against", "random,heuristic", "--games", "6", *FAST, "--json",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    rows = {row["name"]: row for row in json.loads(played.stdout)["entrants"]}
    assert set(rows) == {"bot", "random", "heuristic"}
    assert rows["bot"]["games"] == 6 and rows["bot"]["faults"] == {} and rows["bot"]["decisions"] > 0
    arena = sixnimmt(
        PROJECT, "arena", "--bots", f"random,{node_bot}", "--cmd", "node examples/node_bot/bot.js",
        "--table", "3", "--deals", "1", *FAST, "--json",
    )  # fmt: skip
    assert arena.returncode == 0, arena.stderr
    standings = {row["name"]: row for row in json.loads(arena.stdout)["standings"]}
    assert set(standings) == {"random", "node_bot", "bot"}
    assert all(row["faults"] == 0 for row in standings.values())


@pytest.mark.slow
def test_the_node_bot_plays_a_league_sandboxed(node_bot: Path, tmp_path: Path) -> None:
    """Stored from its directory (bot.toml the entry point, no node_modules), checked, played."""
    copy = tmp_path / "node_bot"
    shutil.copytree(node_bot, copy, ignore=shutil.ignore_patterns("node_modules"))
    created = sixnimmt(
        tmp_path, "league", "create", "polyglot", "--bots", f"{copy},random,heuristic",
        "--table", "3", "--deals", "2", *FAST, "--json",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    listed = json.loads(sixnimmt(tmp_path, "bot", "list", "--json").stdout)
    stored = next(row for row in listed if row["name"] == "node_bot")
    assert stored["entry_point"] == "bot.toml" and stored["files"] < 20  # node_modules left out
    ran = sixnimmt(tmp_path, "league", "run", "polyglot", "--local", "--processes", "1", "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["status"]["blocks"] == {"done": 2}
    rows = {row["bot"]: row for row in result["standings"]}
    assert set(rows) == {"node_bot@1", "classic/random@1", "classic/heuristic@1"}
    assert all(row["games"] == 6 and row["faults"] == 0 for row in rows.values())


# -- bad input: one line, nothing lost -------------------------------------------------------------


def test_a_command_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    for args in (
        ("bot", "check", "--cmd", "no-such-program-xyz bot.js"),
        ("bot", "play", "--cmd", "no-such-program-xyz", "--against", "random"),
        ("arena", "--bots", "random", "--cmd", "./missing-binary"),
        ("bot", "run", "--cmd", "no-such-program-xyz"),
    ):
        done = sixnimmt(tmp_path, *args)
        assert done.returncode == 2, (args, done.stderr)
        line = one_line(done.stderr)
        assert "no program" in line and ("no-such-program-xyz" in line or "missing-binary" in line), line


def test_bot_and_cmd_are_one_or_the_other(tmp_path: Path) -> None:
    for args in (("bot", "check"), ("bot", "check", "random", "--cmd", "true"), ("bot", "play")):
        done = sixnimmt(tmp_path, *args)
        assert done.returncode == 2 and "name" in one_line(done.stderr) and "--cmd" in done.stderr


MALFORMED = [
    ('command = ["node", "bot.js"\n', "is not valid TOML"),
    ("command = 3\n", "must name the bot's program"),
    ("command = []\n", "the command is empty"),
    ('name = "x"\n', "must name the bot's program"),
    ('command = "node bot.js"\nversion = 2\n', "unknown key 'version'"),
    ('command = "node \'bot.js"\n', "cannot split the command"),
]


def test_a_malformed_bot_toml_is_one_line(tmp_path: Path) -> None:
    from bot_sdk.command import CommandError, parse

    for number, (toml, said) in enumerate(MALFORMED):
        directory = bot_dir(tmp_path, f"broken{number}", toml)
        with pytest.raises(CommandError, match=re.escape(said)):
            parse(str(directory))
    checked = sixnimmt(tmp_path, "bot", "check", str(tmp_path / "broken0"))
    assert checked.returncode == 2 and MALFORMED[0][1] in one_line(checked.stderr)


@pytest.mark.parametrize(("toml", "said"), [MALFORMED[0], MALFORMED[4]])
def test_a_malformed_bot_toml_stores_nothing(tmp_path: Path, toml: str, said: str) -> None:
    directory = bot_dir(tmp_path, "broken", toml)
    created = sixnimmt(tmp_path, "league", "create", "x", "--bots", f"{directory},random", "--table", "2")
    assert created.returncode == 2 and said in one_line(created.stderr)
    assert _nothing_stored(default_store(tmp_path))


def test_a_program_that_exits_at_once_is_one_line(tmp_path: Path) -> None:
    quits = bot_dir(
        tmp_path, "quits", 'command = ["sh", "quit.sh"]\n', {"quit.sh": "echo giving up >&2\nexit 3\n"}
    )
    played = sixnimmt(tmp_path, "bot", "play", str(quits), "--against", "random", "--games", "2", *FAST)
    assert played.returncode == 2
    assert one_line(played.stderr) == (
        "sixnimmt: error: the bot quits exited with status 3 before its games ended;"
        " its stderr ends: giving up"
    )
    checked = sixnimmt(tmp_path, "bot", "check", "--cmd", "sh -c 'exit 0'", "--games", "2", *FAST, "--json")
    assert checked.returncode == 1, checked.stderr
    report = json.loads(checked.stdout)
    assert not report["ok"] and "exited with status 0 before its games ended" in report["problem"]
    created = sixnimmt(tmp_path, "league", "create", "q", "--bots", f"{quits},random", "--table", "2", *FAST)
    assert created.returncode == 2
    assert "the bot failed its check" in one_line(created.stderr) and "giving up" in created.stderr
    assert _nothing_stored(default_store(tmp_path))


def test_a_bare_command_is_refused_as_a_league_entrant(tmp_path: Path) -> None:
    created = sixnimmt(tmp_path, "league", "create", "x", "--bots", "cmd:node bot.js,random", "--table", "2")
    assert created.returncode == 2 and "bot.toml" in one_line(created.stderr)


def _nothing_stored(store: Path) -> bool:
    from workers.store.engine import make_engine
    from workers.store.schema import bots, leagues

    if not store.exists():
        return True
    engine = make_engine(f"sqlite:///{store}")
    with engine.connect() as conn:
        return all(
            conn.execute(select(func.count()).select_from(t)).scalar_one() == 0 for t in (bots, leagues)
        )


# -- the process: environment, directory, sandbox ----------------------------------------------------


def test_a_command_bot_gets_the_address_and_token_and_runs_in_its_directory(tmp_path: Path) -> None:
    probe = bot_dir(
        tmp_path,
        "probe",
        'command = "sh probe.sh"\n',
        {"probe.sh": 'echo "$SIXNIMMT_REFEREE|$SIXNIMMT_TOKEN|$(pwd)" >&2\n'},
    )
    with local_referee() as client:
        process = spawn_bot(str(probe), referee=client.address, token="t0k", variant="classic", name="p")
        assert process.wait(30) == 0
        assert process.stderr_tail().strip() == f"{client.address}|t0k|{os.path.realpath(probe)}"


def test_a_sandboxed_command_bot_sees_only_its_own_directory_read_only(tmp_path: Path) -> None:
    """The same confinement as a Python bot's: its directory read-only, no other host path."""
    probe = bot_dir(
        tmp_path,
        "probe",
        'command = ["sh", "probe.sh"]\n',
        {
            "probe.sh": f"""\
                exec 1>&2
                echo "cwd=$(pwd)"
                test -r probe.sh && echo "reads its own files"
                touch here 2>/dev/null || echo "its directory is read-only"
                touch "$HOME/scratch" && echo "writes its home"
                test -e {PROJECT}/README.md || echo "no project files"
                test -e {tmp_path}/secret || echo "no files beside it"
                command -v node >/dev/null && echo "has node"
                echo "referee=$SIXNIMMT_REFEREE"
                """
        },
    )
    (tmp_path / "secret").write_text("not for bots")
    with local_referee() as client, Sandbox(bots_in=[tmp_path]) as sandbox:
        process = spawn_bot(
            str(probe), referee=client.address, token="t", variant="classic", name="p", launch=sandbox
        )
        assert process.wait(60) == 0, process.stderr_tail()
    said = process.stderr_tail().splitlines()
    assert said == [
        f"cwd={os.path.realpath(probe)}",
        "reads its own files",
        "its directory is read-only",
        "writes its home",
        "no project files",
        "no files beside it",
        "has node",
        "referee=unix:/referee.sock",
    ], said


def test_a_command_bot_packs_with_bot_toml_as_its_entry_point_and_without_node_modules(
    tmp_path: Path,
) -> None:
    from bot_sdk.command import parse
    from workers.bots.artifacts import bot_spec, pack, unpack

    directory = bot_dir(tmp_path, "js", 'command = ["node", "main.js"]\n', {"main.js": "// a bot\n"})
    (directory / "node_modules" / "dep").mkdir(parents=True)
    (directory / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")
    artifact = pack(directory)
    assert artifact.entry_point == "bot.toml" and artifact.files == ("bot.toml", "main.js")
    unpack(artifact.content, tmp_path / "unpacked")
    bot = parse(bot_spec(tmp_path / "unpacked", artifact.entry_point))
    assert bot is not None and bot.argv == ("node", "main.js")
    assert bot.directory == os.path.realpath(tmp_path / "unpacked") and bot.label == "unpacked"


@pytest.mark.slow
def test_bot_run_runs_a_command_bot_against_a_referee_of_ones_own(node_bot: Path) -> None:
    from arena.matches import MatchPlan

    with local_referee() as client:
        for bot in (["--cmd", "node examples/node_bot/dist/bot.js"], [str(node_bot)]):
            (match_id,), tokens = client.create_matches(
                "classic", {"players": 2, "hands": 1}, [MatchPlan(("node", "r"), 5)]
            )
            address = client.address
            other = spawn_bot("random", referee=address, token=tokens["r"], variant="classic", name="r")
            ran = sixnimmt(PROJECT, "bot", "run", *bot, "--referee", address, "--token", tokens["node"])
            assert ran.returncode == 0, ran.stderr
            assert "node_bot: 1 games" in ran.stderr and other.wait(30) == 0
            match = client.result(match_id)
            assert match.status == "finished" and [s.faults for s in match.seats] == [{}, {}]


# -- the Node install is part of the test setup ------------------------------------------------------


def make(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """``make -s ARGS`` in the project without reinstalling the venv; ``path``: its PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    if path is not None:
        env["PATH"] = path
    make_bin = shutil.which("make")
    assert make_bin is not None, "make is not installed"
    return subprocess.run(
        [make_bin, "-s", "-C", str(PROJECT), "-o", ".venv/.installed", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_make_test_installs_the_node_bot_before_the_tests() -> None:
    # -W: as if the lock file had changed, so the plan shows the install even when it is done.
    planned = make("-n", "-W", "examples/node_bot/package-lock.json", "test")
    assert planned.returncode == 0, planned.stderr
    lines = planned.stdout.splitlines()
    tests = next(n for n, line in enumerate(lines) if "-m pytest" in line)
    install = next(n for n, line in enumerate(lines) if "npm ci" in line)
    assert install < tests and "npm run --silent build" in lines[install]


def test_without_node_make_says_what_to_install() -> None:
    done = make("-W", "examples/node_bot/package-lock.json", "node", path="/nonexistent")
    assert done.returncode != 0
    assert "needs node and npm" in done.stderr and "apt-get install -y nodejs npm" in done.stderr
