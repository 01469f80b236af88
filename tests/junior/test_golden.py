"""A fresh run of each golden Junior game must match its file under tests/junior/golden/."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .golden import GAMES, HERE, REGENERATE, dump, path_of, playthrough


def _first_difference(recorded: dict[str, Any], fresh: dict[str, Any]) -> str:
    for key in sorted((set(recorded) | set(fresh)) - {"steps"}):
        if recorded.get(key) != fresh.get(key):
            return f"{key}: recorded {recorded.get(key)!r}, fresh {fresh.get(key)!r}"
    for a, b in zip(recorded["steps"], fresh["steps"], strict=False):
        if a != b:
            keys = [k for k in a | b if a.get(k) != b.get(k)]
            return f"step {a.get('step')}: {keys} differ"
    return f"the recording has {len(recorded['steps'])} steps, a fresh run {len(fresh['steps'])}"


@pytest.mark.parametrize("name", GAMES)
def test_a_fresh_run_matches_the_golden_file(name: str) -> None:
    path = path_of(name)
    assert path.exists(), f"{path} is missing. {REGENERATE}"
    recorded = json.loads(path.read_text())
    fresh = playthrough(name)
    if recorded != fresh:
        pytest.fail(
            f"{path.name} differs from a fresh run at {_first_difference(recorded, fresh)}. {REGENERATE}"
        )
    assert json.loads(dump(fresh)) == fresh


def test_there_is_no_stale_golden_file() -> None:
    assert {p.stem for p in HERE.glob("*.json")} == set(GAMES), REGENERATE


def test_the_golden_games_cover_the_rules() -> None:
    """Guard: together the recordings show every event kind and each experts' collection."""
    kinds: set[str] = set()
    for name in GAMES:
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
