"""A fresh run of each golden game must match its file step by step (tests/golden/regenerate.py
lists them: every variant the registry lists, Junior's files in tests/junior/golden/)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from regenerate import GAMES, REGENERATE, dump, missing_variants, path_of, playthrough, stale_files


def _first_difference(recorded: dict[str, Any], fresh: dict[str, Any]) -> str:
    """Where two recordings part: a header field, or a step's field (and seat, for views)."""
    for key in sorted((set(recorded) | set(fresh)) - {"steps"}):
        if recorded.get(key) != fresh.get(key):
            return f"{key}: recorded {recorded.get(key)!r}, fresh {fresh.get(key)!r}"
    old, new = recorded.get("steps", []), fresh["steps"]
    for number, (a, b) in enumerate(zip(old, new, strict=False)):
        for key in ("actions", "events", "pending"):
            if a.get(key) != b.get(key):
                return f"step {number} {key}: recorded {a.get(key)}, fresh {b.get(key)}"
        for seat, (view_a, view_b) in enumerate(zip(a.get("views", []), b["views"], strict=False)):
            if view_a != view_b:
                keys = [k for k in view_a | view_b if view_a.get(k) != view_b.get(k)]
                fields = {k: (view_a.get(k), view_b.get(k)) for k in keys}
                return f"step {number}, view of seat {seat}, (recorded, fresh): {fields}"
        if a != b:
            return f"step {number}: recorded {a}, fresh {b}"
    return f"the recording has {len(old)} steps, a fresh run {len(new)}"


@pytest.mark.parametrize("name", GAMES)
def test_a_fresh_run_matches_the_golden_file(name: str) -> None:
    path = path_of(name)
    assert path.exists(), f"{path} is missing. {REGENERATE}"
    recorded = json.loads(path.read_text())
    fresh = playthrough(name)
    if recorded != fresh:
        where = _first_difference(recorded, fresh)
        pytest.fail(f"{path.name} differs from a fresh run at {where}. {REGENERATE}")
    assert dump(fresh) == path.read_text(), f"{path.name} is not as the script writes it. {REGENERATE}"


def test_there_is_no_stale_golden_file() -> None:
    assert not stale_files(), REGENERATE


def test_every_variant_has_a_golden_game() -> None:
    assert not missing_variants(), "add a golden game of each to GAMES in tests/golden/regenerate.py"


def _events(name: str) -> list[dict[str, Any]]:
    return [event for step in json.loads(path_of(name).read_text())["steps"] for event in step["events"]]


def _of(variant: str) -> list[str]:
    return [name for name, golden in GAMES.items() if golden.variant.startswith(variant)]


@pytest.mark.parametrize("name", _of("classic"))
def test_the_golden_games_cover_the_rules(name: str) -> None:
    """Guard: each recording shows a rule-3 take and a rule-4 choice (Professional: a left placement)."""
    events = [event for step in json.loads(path_of(name).read_text())["steps"] for event in step["events"]]
    kinds = [event["type"] for event in events]
    placed = [event for event in events if event["type"] == "CardPlaced"]
    assert "RowChosen" in kinds
    assert any(event["taken"] for event in placed)
    assert kinds[-1] == "GameEnded"
    if GAMES[name].config.get("professional"):
        assert any(event["left"] for event in placed)
    views = [view for step in json.loads(path_of(name).read_text())["steps"] for view in step["views"]]
    assert any(view["revealed"] for view in views), "some view shows a low card's turn"


def test_the_junior_games_cover_the_rules() -> None:
    """Guard: together the recordings show every event kind and each experts' collection."""
    kinds: set[str] = set()
    for name in _of("junior"):
        record = json.loads(path_of(name).read_text())
        events = [event for step in record["steps"] for event in step["events"]]
        kinds |= {event["type"] for event in events}
        assert events[-1]["type"] == "GameEnded"
        assert any(event["type"] == "RowCollected" for event in events), name
        if record["variant"] == "junior-experts":
            sizes = {len(event["cards"]) for event in events if event["type"] == "RowCollected"}
            assert 5 in sizes and sizes - {5}, "a sixth card and a row without a match"
    assert kinds == {
        "CardsDealt",
        "CardTurned",
        "CardDrawn",
        "CardPlayed",
        "CardPlaced",
        "RowCollected",
        "GameEnded",
    }


@pytest.mark.parametrize(
    "variant, shown",
    [
        ("board", {"TileAttached", "RowTaken", "LuckCardPlayed", "ActionCardPlayed", "RowOpened"}),
        ("anniversary", {"CardPlaced", "RowChosen", "SpecialPlayed", "SpecialSwapped", "RoundScored"}),
    ],
)
def test_the_board_and_anniversary_games_show_their_special_parts(variant: str, shown: set[str]) -> None:
    """Guard: each game ends, and together they play the game's luck, action or special cards."""
    kinds: set[str] = set()
    for name in _of(variant):
        events = _events(name)
        assert events[-1]["type"] == "GameEnded", name
        kinds |= {event["type"] for event in events}
    assert shown <= kinds, shown - kinds
