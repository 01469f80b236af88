"""The board and tiles as data: the default files, the notation, and clear errors for bad entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from games.board.rules.board import (
    BASIC_KINDS,
    Board,
    ScoreTrack,
    Space,
    SpaceKind,
    Tiles,
    load_board,
    load_tiles,
)
from games.board.rules.brettspiel import Brettspiel, BrettspielConfig
from referee.rules.errors import ConfigError


def test_the_default_blue_side_has_every_basic_space_and_one_play_two_row() -> None:
    board = load_board("blue")
    assert board.side == "blue" and len(board.rows) == 10
    assert all(5 <= len(row.spaces) <= 8 for row in board.rows)
    assert all(row.spaces[-1].kind is SpaceKind.TAKE_ROW for row in board.rows)
    assert board.kinds() == BASIC_KINDS
    assert {s.token for row in board.rows for s in row.spaces} >= {"G", "GG", "R", "RR", "D", "T"}
    assert sum(1 for row in board.rows if row.double_tile_spaces) == 1
    assert all(row.spaces[0].kind is SpaceKind.PLAIN for row in board.rows)
    assert board.track == ScoreTrack(-44, 44, (-5, -10, -15, -20, -25, -30, -35, -40))


def test_the_default_tiles_follow_the_documented_oxen() -> None:
    tiles = load_tiles("assumed")
    assert tiles.numbers == tuple(range(1, 101))
    expected = {5: 2, 10: 3, 11: 5, 55: 5, 99: 5, 100: 3, 1: 1, 95: 2}
    assert {t: tiles.oxen[t] for t in expected} == expected


def test_the_notation_round_trips() -> None:
    rows = [". G GG R RR +3 -7 T", ". D D . T"]
    board = Board.parse(rows)
    assert [row.notation() for row in board.rows] == rows
    assert Board.from_json(board.to_json(), "again") == Board(board.side, board.rows, board.track, "again")
    assert Space.parse("-7") == Space(SpaceKind.POINTS, -7)
    tiles = Tiles.from_oxen({3: 2}, 5)
    assert tiles.oxen == (0, 1, 1, 2, 1, 1)
    assert Tiles.from_json(tiles.to_json(), "again").oxen == tiles.oxen


def _layout(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "side": "blue",
        "rows": [". . T", ". G . T"],
        "score_track": {"low": -44, "high": 44, "clovers": [-5, -10]},
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a layout is a JSON object"),
        (_layout(side="green"), "side must be one of blue, red, got 'green'"),
        (_layout(rows=[". . T"]), "at least 2 rows"),
        (_layout(rows=[". . T", ". X T"]), r"rows\[1\], space 1: unknown space 'X'"),
        (_layout(rows=[". . T", ". G ."]), r"rows\[1\], space 2 '\.': the last space must take the row"),
        (_layout(rows=[". T . T", ". . T"]), r"rows\[0\], space 1 'T': only the last space may take"),
        (_layout(rows=["D . T", ". . T"]), r"rows\[0\], space 0 'D'"),
        (_layout(rows=["T", ". . T"]), r"rows\[0\]: a row needs at least 2 spaces"),
        (_layout(rows=[". +0 T", ". . T"]), r"rows\[0\], space 1: unknown space '\+0'"),
        (_layout(rows=[3, ". . T"]), r"rows\[0\]: a row is a string"),
        (_layout(colour="blue"), "unknown key.*colour"),
        (_layout(score_track={"low": 0, "high": 44, "clovers": []}), "low < 0 < high"),
        (_layout(score_track={"low": -44, "high": 44, "clovers": [5]}), r"clovers\[0\] = 5 is not a minus"),
        (_layout(score_track={"low": -44, "high": 44, "clovers": [-5, -5]}), "twice"),
    ],
)
def test_a_bad_layout_names_the_bad_entry(data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Board.from_json(data, "mine.json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"oxen": {"1": [1, 2], "2": [2, 3]}}, "tile 2 is listed twice"),
        ({"oxen": {"1": [1, 3]}}, "2 are missing"),
        ({"oxen": {"x": [1]}}, "'x' is not a positive number of oxen"),
        ({"oxen": {"1": [0, 1]}}, "must be a list of tile numbers"),
        ({"oxen": {}}, "oxen must map"),
        ({"oxen": {"1": [1]}, "cards": 3}, "unknown key"),
    ],
)
def test_bad_tiles_name_the_bad_entry(data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Tiles.from_json(data, "tiles.json")


def test_a_layout_file_of_ones_own_replaces_the_default(tmp_path: Path) -> None:
    path = tmp_path / "my_board.json"
    data = load_board("blue").to_json()
    data["rows"][0] = ". RR RR RR T"
    path.write_text(json.dumps(data))
    game = Brettspiel(BrettspielConfig(board=str(path)))
    assert game.board.rows[0].notation() == ". RR RR RR T"
    path.write_text("{not json")
    load_board.cache_clear()
    with pytest.raises(ConfigError, match="not valid JSON"):
        Brettspiel(BrettspielConfig(board=str(path)))
