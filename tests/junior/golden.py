"""Golden playthroughs of the Junior engine: every seat's view and the pending decision after each step.

Each file under ``tests/junior/golden/`` is one game with a fixed seed in which every seat plays
the referee's default action. ``test_golden.py`` replays the games and compares them. Rewrite the
files only on purpose, after a change meant to alter what the engine does or shows, and review
the diff:

    .venv/bin/python tests/junior/golden.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.rules import CHANCE, Variant, event_to_json, make_variant
from referee.rules.transcript import Playthrough

HERE = Path(__file__).resolve().parent / "golden"

GAMES: dict[str, tuple[str, dict[str, Any], int]] = {
    "basic_2p": ("junior-basic", {"players": 2}, 1),
    "advanced_2p": ("junior-advanced", {"players": 2}, 1),
    "nuisance_2p": ("junior-advanced", {"players": 2, "nuisance": True}, 2),
    "experts_2p": ("junior-experts", {"players": 2}, 2),
}
"""File name → (variant, config, seed)."""

REGENERATE = "If the change is intended, run `.venv/bin/python tests/junior/golden.py` and review the diff."


def path_of(name: str) -> Path:
    return HERE / f"{name}.json"


def playthrough(name: str) -> dict[str, Any]:
    """Play the named game and record it, as plain JSON data."""
    variant_name, config, seed = GAMES[name]
    variant = make_variant(variant_name, config)
    game = Playthrough(variant, seed)
    steps = [_snapshot(variant, game, ())]
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            events = game.resolve_chance()
        else:
            events = game.apply({d.seat: variant.default_action(game.state, d) for d in pending})
        steps.append(_snapshot(variant, game, events))
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


def _snapshot(variant: Variant[Any, Any], game: Playthrough, events: Any) -> dict[str, Any]:
    return {
        "step": len(game.steps),
        "actions": [[seat, action] for seat, action in (game.steps[-1] if game.steps else ())],
        "events": [event_to_json(event) for event in events],
        "pending": [
            {"seat": d.seat, "kind": d.kind.value, "options": list(d.options)} for d in game.pending()
        ],
        "views": [variant.view(game.state, seat).to_json() for seat in range(variant.players)],
    }


def dump(record: dict[str, Any]) -> str:
    """One line per step, so a diff shows which steps changed."""
    head = {k: v for k, v in record.items() if k != "steps"}
    lines = [json.dumps(step, separators=(",", ":")) for step in record["steps"]]
    body = json.dumps(head, indent=1)[:-2]
    return body + ',\n "steps": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for stale in set(HERE.glob("*.json")) - {path_of(name) for name in GAMES}:
        stale.unlink()
    for name in GAMES:
        path_of(name).write_text(dump(playthrough(name)))
        print(f"wrote {path_of(name)}")


if __name__ == "__main__":
    main()
