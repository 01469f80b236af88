"""One numbering for people: every replay line a person reads counts rows (and a row's spaces and
places) from 1, as the dashboard draws them, in every game with rows; the transcripts and the
wire keep counting from 0 (issue 31: the board game's replay said "TileAttached tile=58, row=2"
beside a tile drawn in "row 3")."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from bot_sdk.cli import _replay_lines, main
from games.replay_text import event_line
from referee.rules import CHANCE, event_to_json, make_variant
from referee.rules.transcript import Playthrough

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("classic", {"players": 3, "hands": 1}),
    ("classic", {"players": 4, "hands": 1, "professional": True}),
    ("anniversary", {"players": 4, "rounds": 1}),
    ("anniversary", {"players": 3, "rounds": 1, "fifth_row_end": "next_take", "block_end": "turn"}),
    ("board", {"players": 3}),
    ("board", {"players": 4, "pro": True, "luck": True}),
    ("junior-basic", {"players": 3}),
    ("junior-advanced", {"players": 4}),
    ("junior-experts", {"players": 3}),
]
"""A game of every variant with rows, with the options that bring out their row events."""

NAMES = ["Ann", "Bob", "Cy", "Di"]
FIELD_DUMP = re.compile(r"\b[a-z_]+=")
"""The generic line's ``name=value``: an event no game worded."""


def events_of(variant_name: str, config: dict[str, Any], seed: int) -> list[list[dict[str, Any]]]:
    """Every step's events, as JSON, of a game of random legal play."""
    variant = make_variant(variant_name, config)
    game, rng = Playthrough(variant, seed), random.Random(seed)
    steps = []
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            actions = {CHANCE: variant.sample_chance(game.state, game.chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        steps.append([event_to_json(e) for e in game.apply(actions)])
    return steps


def check_line(line: str, fields: dict[str, Any]) -> None:
    """``line`` words the event, with each of its rows, spaces and places counted from 1."""
    assert not FIELD_DUMP.search(line), f"no words for {fields}: {line!r}"
    for key in ("row", "from_row", "opened"):
        if isinstance(fields.get(key), int) and fields[key] >= 0:
            assert f"row {fields[key] + 1}" in line, (key, fields, line)
    if isinstance(fields.get("space"), int):
        assert f"space {fields['space'] + 1}" in line, (fields, line)
    if fields["type"] in ("BlocksRemoved", "StopSignsRemoved"):
        assert line.endswith(" " + ", ".join(str(r + 1) for r in fields["rows"])), (fields, line)
    if fields["type"] == "CardShifted":
        assert f"place {fields['position'] + 1} of row" in line, (fields, line)
    if re.search(r"\binserted into row", line):
        assert f"at place {fields['position'] + 1}" in line, (fields, line)


@pytest.mark.parametrize(("variant", "config"), GAMES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(GAMES)])
def test_every_row_in_a_replay_line_is_counted_from_one(variant: str, config: dict[str, Any]) -> None:
    describe = _replay_lines(variant)
    assert describe is not None, f"{variant}: its game has no replay lines"
    seen: set[str] = set()
    for seed in range(3):
        for events in events_of(variant, config, seed):
            for number, fields in enumerate(events):
                line = event_line(fields["type"], fields, NAMES, describe, events[:number])
                check_line(line, fields)
                seen.add(fields["type"])
    rowed = {"CardPlaced", "TileAttached", "RowTaken", "RowCollected", "RowChosen", "RowOpened"}
    assert seen & rowed, f"{variant}: the games placed nothing in a row ({sorted(seen)})"


def test_the_board_games_line_for_the_issues_tile() -> None:
    """The issue's event, worded: the tile drawn in row 3 is attached to row 3."""
    describe = _replay_lines("board")
    fields = {"type": "TileAttached", "seat": 1, "tile": 58, "row": 2, "space": 3, "effect": "red_ox"}
    line = event_line("TileAttached", fields, NAMES, describe)
    assert line == "Bob: tile 58 attached to row 3, space 4 (Red Ox space)"


def test_sixnimmt_replay_prints_words_with_rows_from_one_and_json_as_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for variant in ("board", "junior-experts", "classic"):
        folder = tmp_path / variant
        code = main(["play", "--variant", variant, "--bots", "random,random", "--games", "1", "--seed", "3",
                     "--transcripts", str(folder), "--json"])  # fmt: skip
        assert code == 0
        capsys.readouterr()
        path = next(folder.glob("game-*.json"))
        assert main(["replay", str(path), "--json"]) == 0
        steps = json.loads(capsys.readouterr().out)
        assert main(["replay", str(path)]) == 0
        text = capsys.readouterr().out.splitlines()
        assert len(text) == sum(len(events) for events in steps)
        lines = iter(text)
        for number, events in enumerate(steps, 1):
            for fields in events:
                step, _, line = next(lines).strip().partition("  ")
                assert int(step) == number
                check_line(line, fields)
                if fields["type"] == "TileAttached":
                    assert f"tile {fields['tile']} attached to row {fields['row'] + 1}," in line
                if fields["type"] in ("TileAttached", "CardPlaced"):
                    assert line.startswith(("random", "random-2")), "seats by their names"
        rows = [f["row"] for events in steps for f in events if isinstance(f.get("row"), int)]
        assert 0 in rows, "the transcript still counts rows from 0"
