"""The league's tables as the commands print them: standings, head-to-head, league list, bot list.

Each runs as a real process with stdout a pipe; every table must have its headers, every cell
under its header and whole (long bot names included), and agree with the command's ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit import sixnimmt, table_rows

LONG = "a_bot_with_a_rather_long_name"
STANDINGS = ["#", "bot", "score", "95% interval", "ranks", "gap to next", "gap 95% interval", ">/="]
STANDINGS += ["mean", "games", "faults"]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A small finished league of two reference bots and one file bot with a long name, in SQLite."""
    where = tmp_path_factory.mktemp("tables")
    source = (Path(__file__).resolve().parents[2] / "examples" / "cautious_bot.py").read_text()
    (where / f"{LONG}.py").write_text(source)
    env = {"SIXNIMMT_DATABASE_URL": f"sqlite:///{where / 'store.db'}"}
    bots = f"random,heuristic,{LONG}.py"
    for argv in (
        ["league", "create", "cup", "--bots", bots, "--table", "3", "--deals", "2", "-o", "hands=1"],
        ["league", "run", "cup", "--processes", "1", "--json"],
    ):
        done = sixnimmt(where, *argv, env=env)
        assert done.returncode == 0, done.stderr
    return where, env


def run(league: tuple[Path, dict[str, str]], *argv: str) -> Any:
    where, env = league
    done = sixnimmt(where, *argv, env=env)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    return json.loads(done.stdout) if "--json" in argv else done.stdout


def _near(cell: str, value: float) -> bool:
    """A table cell of two decimals shows ``value`` (which --json gives to four)."""
    return abs(float(cell) - value) <= 0.005 + 1e-4


def test_standings_and_head_to_head(league: tuple[Path, dict[str, str]]) -> None:
    data = run(league, "league", "standings", "cup", "--h2h", "--json")
    text = run(league, "league", "standings", "cup", "--h2h")
    rows = table_rows(text, STANDINGS, 3)
    for row, line in zip(rows, data["standings"], strict=True):
        assert row["bot"] == line["bot"]  # whole, however long
        # --json rounds to four places and the table to two: compare the numbers, not the digits
        # (a value like -38.3050 in JSON may read -38.31 in the table, from its unrounded -38.30503).
        assert _near(row["score"], line["score"])
        low, high = row["95% interval"].strip("[]").split(", ")
        assert _near(low, line["score_low"]) and _near(high, line["score_high"])
        assert (row["games"], row["faults"]) == (str(line["games"]), str(line["faults"]))
    assert rows[-1]["gap to next"] == rows[-1][">/="] == ""
    assert {r[">/="] for r in rows[:-1]} <= {">", "="}

    h2h = data["head_to_head"]
    names = h2h["entrants"]
    assert f"{LONG}@1" in names
    cells = table_rows(text, ["bot", *names], len(names))  # every name whole in the header
    for a, row in enumerate(cells):
        assert row["bot"] == names[a]
        for b, name in enumerate(names):
            if a == b:
                assert row[name] == "-"
                continue
            h = h2h["table"][a][b]
            star = "*" if h2h["told_apart"] and h2h["told_apart"][a][b] else ""
            assert row[name] == f"{h['ahead']}/{h['level']}/{h['behind']}{star}"


def test_league_list(league: tuple[Path, dict[str, str]]) -> None:
    data = run(league, "league", "list", "--json")
    (listed,) = data["leagues"] if isinstance(data, dict) else data  # {"store", "leagues"} or a bare list
    (row,) = table_rows(run(league, "league", "list"), ["league", "variant", "format", "blocks done"], 1)
    assert row == {
        "league": "cup",
        "variant": "classic",
        "format": "round-robin",
        "blocks done": f"{listed['done']}/{listed['blocks']}",
    }
    assert listed["done"] == listed["blocks"] == 2


def test_bot_list_shows_the_code_not_the_archive(league: tuple[Path, dict[str, str]]) -> None:
    bots = run(league, "bot", "list", "--json")
    text = run(league, "bot", "list")
    headers = ["bot", "variant", "entry point", "files", "size", "sha256", "stored"]
    rows = table_rows(text, headers, len(bots))
    mine = (league[0] / f"{LONG}.py").stat().st_size
    for row, bot in zip(rows, bots, strict=True):
        assert row["bot"] == f"{bot['name']}@{bot['version']}"
        assert (row["entry point"], row["sha256"]) == (bot["entry_point"], bot["sha256"][:12])
        assert row["files"] == str(bot["files"]) == "1"
        assert bot["size"] == 10240 != bot["code_bytes"]  # a small bot's tar is padded to 10 KiB
        assert "10240" not in row["size"]
    (long,) = [b for b in bots if b["name"] == LONG]
    assert long["code_bytes"] == mine
    (row,) = [r for r in rows if r["bot"] == f"{LONG}@1"]
    assert row["size"] == f"{mine / 1024:.1f} KiB"


def test_status_names_the_blocks(league: tuple[Path, dict[str, str]]) -> None:
    text = run(league, "league", "status", "cup")
    assert "blocks done 2" in text and "faults: none" in text
