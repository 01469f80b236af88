"""Golden playthroughs of the classic engine: every seat's view and the pending decisions after each step.

Each file under ``tests/golden/`` is one game with a fixed seed in which every seat plays the
referee's default action (lowest card; for a low card, the row with the fewest bull heads).
``test_golden.py`` replays the games and compares. Rewrite the files only on purpose, after a
change that is meant to alter what the engine does or shows, and review the diff:

    .venv/bin/python tests/golden/regenerate.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from referee.rules import CHANCE, event_to_json, make_variant
from referee.rules.transcript import Playthrough

HERE = Path(__file__).resolve().parent

GAMES: dict[str, tuple[dict[str, Any], int]] = {
    "classic_2p": ({"players": 2, "hands": 2}, 1),
    "classic_4p": ({"players": 4, "hands": 1}, 1),
    "classic_10p": ({"players": 10, "hands": 1}, 1),
    "tactics_4p": ({"players": 4, "hands": 1, "tactics": True}, 1),
    "professional_4p": ({"players": 4, "hands": 1, "professional": True}, 1),
}
"""File name → (classic config, seed)."""

REGENERATE = (
    "If the change is intended, run `.venv/bin/python tests/golden/regenerate.py` and review the diff."
)


def path_of(name: str) -> Path:
    return HERE / f"{name}.json"


def playthrough(name: str) -> dict[str, Any]:
    """Play the named game and record it, as plain JSON data."""
    config, seed = GAMES[name]
    variant = make_variant("classic", config)
    game = Playthrough(variant, seed)
    steps = [_snapshot(variant, game, [], ())]
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            events = game.resolve_chance()
        else:
            events = game.apply({d.seat: variant.default_action(game.state, d) for d in pending})
        steps.append(_snapshot(variant, game, game.steps[-1], events))
    transcript = game.transcript()
    record = {
        "name": name,
        "variant": variant.name,
        "engine_version": variant.engine_version,
        "config": variant.config_json(),
        "seed": seed,
        "policy": "variant.default_action for every seat",
        "digest": transcript.digest(),
        "outcome": None if transcript.outcome is None else transcript.outcome.to_json(),
        "steps": steps,
    }
    data: dict[str, Any] = json.loads(json.dumps(record))
    return data


def _snapshot(variant: Any, game: Playthrough, step: Any, events: Any) -> dict[str, Any]:
    return {
        "step": len(game.steps),
        "actions": [[seat, action] for seat, action in step],
        "events": [event_to_json(event) for event in events],
        "pending": [
            {"seat": d.seat, "kind": d.kind.value, "options": list(d.options)} for d in game.pending()
        ],
        "views": [variant.view(game.state, seat).to_json() for seat in range(variant.players)],
    }


def dump(data: dict[str, Any]) -> str:
    """Readable, diff-friendly JSON: one line per header field, per step summary and per view."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    lines = ["{"]
    for key, value in data.items():
        if key != "steps":
            lines.append(f" {json.dumps(key)}: {compact(value)},")
    lines.append(' "steps": [')
    for number, step in enumerate(data["steps"]):
        head = {k: v for k, v in step.items() if k != "views"}
        lines.append("  " + compact(head)[:-1] + ', "views": [')
        views = [compact(view) for view in step["views"]]
        lines.append(",\n".join("   " + view for view in views))
        lines.append("  ]}" + ("," if number < len(data["steps"]) - 1 else ""))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    for name in GAMES:
        text = dump(playthrough(name))
        path = path_of(name)
        old = path.read_text() if path.exists() else None
        path.write_text(text)
        state = "unchanged" if old == text else "rewritten"
        print(f"{path.relative_to(HERE.parent.parent)}: {state} ({len(text) // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
