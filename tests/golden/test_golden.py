"""A fresh run of each golden game must match its file under tests/golden/ step by step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from regenerate import GAMES, HERE, REGENERATE, path_of, playthrough


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


def test_there_is_no_stale_golden_file() -> None:
    assert {p.stem for p in HERE.glob("*.json")} == set(GAMES), REGENERATE


@pytest.mark.parametrize("name", GAMES)
def test_the_golden_games_cover_the_rules(name: str) -> None:
    """Guard: each recording shows a rule-3 take and a rule-4 choice (Professional: a left placement)."""
    events = [event for step in json.loads(path_of(name).read_text())["steps"] for event in step["events"]]
    kinds = [event["type"] for event in events]
    placed = [event for event in events if event["type"] == "CardPlaced"]
    assert "RowChosen" in kinds
    assert any(event["taken"] for event in placed)
    assert kinds[-1] == "GameEnded"
    if GAMES[name][0].get("professional"):
        assert any(event["left"] for event in placed)
    views = [view for step in json.loads(path_of(name).read_text())["steps"] for view in step["views"]]
    assert any(view["revealed"] for view in views), "some view shows a low card's turn"
