"""The anniversary variant through the command line, as for every variant: ``bot check``, the
gRPC arena, ``bot submit`` and a league of sandboxed bots played to its standings."""

from __future__ import annotations

import json
from pathlib import Path

from testkit import sixnimmt

LOW_BOT = '''
from games.anniversary.sdk import AnniversaryBot, AnniversaryView


class LowBot(AnniversaryBot):
    """Its lowest card, no special card."""

    def choose_card(self, view: AnniversaryView) -> int:
        return min(view.hand)
'''


def test_bot_check_and_the_grpc_arena_play_the_anniversary(tmp_path: Path) -> None:
    (tmp_path / "low.py").write_text(LOW_BOT)
    checked = sixnimmt(tmp_path, "bot", "check", "low.py", "--variant", "anniversary", "--games", "4")
    assert checked.returncode == 0, checked.stderr
    assert "FAIL" not in checked.stdout and checked.stdout.rstrip().endswith("ok"), checked.stdout
    arena = sixnimmt(
        tmp_path, "arena", "--variant", "anniversary", "--bots", "random,heuristic,low.py", "--table", "3",
        "--deals", "1", "--json",
    )  # fmt: skip
    assert arena.returncode == 0, arena.stderr
    data = json.loads(arena.stdout)
    rows = {row["name"]: row for row in data["standings"]}
    assert set(rows) == {"random", "heuristic", "low"}
    assert all(row["games"] == 3 and row["faults"] == 0 for row in rows.values()), rows


def test_a_league_of_sandboxed_anniversary_bots_plays_to_its_standings(tmp_path: Path) -> None:
    (tmp_path / "low.py").write_text(LOW_BOT)
    submitted = sixnimmt(tmp_path, "bot", "submit", "low.py", "--name", "low", "--variant", "anniversary")
    assert submitted.returncode == 0, submitted.stderr
    assert "stored low@1" in submitted.stdout
    made = sixnimmt(
        tmp_path, "league", "create", "jubilee", "--variant", "anniversary",
        "--bots", "random*2,heuristic,low", "--deals", "1", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    seats = ["anniversary/random@1#1", "anniversary/random@1#2", "anniversary/heuristic@1", "low@1"]
    assert json.loads(made.stdout)["entrants"] == seats
    ran = sixnimmt(tmp_path, "league", "run", "jubilee", "--local", "--json")
    assert ran.returncode == 0, ran.stderr
    standings = json.loads(ran.stdout)["standings"]
    assert sorted(row["bot"] for row in standings) == sorted(seats)
    text = sixnimmt(tmp_path, "league", "standings", "jubilee")
    assert text.returncode == 0 and all(seat in text.stdout for seat in seats), text.stdout
    status = json.loads(sixnimmt(tmp_path, "league", "status", "jubilee", "--json").stdout)
    assert status["blocks"] == {"done": 1} and status["matches"] == 4
    assert not any(status["faults"].values()) and not status["errors"], status
    listed = json.loads(sixnimmt(tmp_path, "bot", "list", "--json").stdout)
    assert {row["name"] for row in listed} == {"anniversary/random", "anniversary/heuristic", "low"}


def test_sixnimmt_variants_lists_the_anniversary_with_its_options(tmp_path: Path) -> None:
    listed = sixnimmt(tmp_path, "variants", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = [v for v in json.loads(listed.stdout) if v["name"] == "anniversary"]
    assert entry["aliases"] == ["25th-anniversary", "jubilaeum"] and entry["higher_is_better"] is False
    options = {o["name"]: o for o in entry["options"]}
    assert (options["players"]["min"], options["players"]["max"], options["rounds"]["default"]) == (2, 8, 2)
    for name in ("specials_each", "block_cards", "specials_per_turn", "swap", "block_end", "keep_specials"):
        assert name in options, name
    text = sixnimmt(tmp_path, "variants").stdout
    assert "anniversary" in text and "negative_positive_cards" in text
