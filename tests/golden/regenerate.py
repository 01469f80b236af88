"""Golden playthroughs of every variant: every seat's view and the pending decisions after each step.

Each golden file is one game with a fixed variant, config and seed, every seat playing by a
fixed policy: the referee's default action (classic: lowest card; for a low card, the row with
the fewest bull heads), or, where the default would never play a game's special cards, the last
option of every decision. ``test_golden.py`` replays the games and compares them with the files;
every variant the registry lists (``referee.rules.registry.VARIANTS``) has at least one. This
one script writes them all (``make golden``). Rewrite the files only on purpose, after a change
that is meant to alter what an engine does or shows, and review the diff:

    .venv/bin/python tests/golden/regenerate.py

The files live in ``tests/golden/``, except Junior's, which stay in ``tests/junior/golden/``
written one line per step as they always were (the others: one line per header field, per
step's summary and per view).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.rules import CHANCE, Variant, event_to_json, make_variant
from referee.rules.core import Action, Decision
from referee.rules.registry import VARIANTS
from referee.rules.transcript import Playthrough

HERE = Path(__file__).resolve().parent
JUNIOR = HERE.parent / "junior" / "golden"

Policy = Callable[[Variant[Any, Any], Playthrough, Decision], Action]

POLICIES: dict[str, Policy] = {
    "variant.default_action for every seat": lambda variant, game, d: variant.default_action(game.state, d),
    "the last option of every decision": lambda variant, game, d: d.options[-1],
}
"""A golden game's policy, by the words its file records it with."""

DEFAULT, LAST = POLICIES


@dataclass(frozen=True)
class Golden:
    """One golden game: what is played, by which policy, and where and how its file is written."""

    variant: str
    config: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    policy: str = DEFAULT
    folder: Path = HERE
    one_line_per_step: bool = False
    """Junior's layout: one line per step (its files kept their bytes when this script took them over)."""


GAMES: dict[str, Golden] = {
    "classic_2p": Golden("classic", {"players": 2, "hands": 2}),
    "classic_4p": Golden("classic", {"players": 4, "hands": 1}),
    "classic_10p": Golden("classic", {"players": 10, "hands": 1}),
    "tactics_4p": Golden("classic", {"players": 4, "hands": 1, "tactics": True}),
    "professional_4p": Golden("classic", {"players": 4, "hands": 1, "professional": True}),
    "basic_2p": Golden("junior-basic", {"players": 2}, 1, folder=JUNIOR, one_line_per_step=True),
    "advanced_2p": Golden("junior-advanced", {"players": 2}, 1, folder=JUNIOR, one_line_per_step=True),
    "nuisance_2p": Golden(
        "junior-advanced", {"players": 2, "nuisance": True}, 2, folder=JUNIOR, one_line_per_step=True
    ),
    "experts_2p": Golden("junior-experts", {"players": 2}, 2, folder=JUNIOR, one_line_per_step=True),
    "board_2p": Golden("board", {"players": 2}),
    "board_pro_luck_3p": Golden("board", {"players": 3, "pro": True, "luck": True}, policy=LAST),
    "anniversary_3p": Golden("anniversary", {"players": 3, "rounds": 1, "hand_size": 6}),
    "anniversary_specials_4p": Golden("anniversary", {"players": 4, "rounds": 1}, policy=LAST),
}
"""File name → the golden game."""

REGENERATE = (
    "If the change is intended, run `.venv/bin/python tests/golden/regenerate.py` and review the diff."
)


def path_of(name: str) -> Path:
    return GAMES[name].folder / f"{name}.json"


def missing_variants() -> list[str]:
    """The registry's variants without a golden game."""
    covered = {make_variant(golden.variant).name for golden in GAMES.values()}
    return [cls.name for cls in VARIANTS if cls.name not in covered]


def playthrough(name: str) -> dict[str, Any]:
    """Play the named game and record it, as plain JSON data."""
    golden = GAMES[name]
    variant = make_variant(golden.variant, golden.config)
    policy = POLICIES[golden.policy]
    game = Playthrough(variant, golden.seed)
    steps = [_snapshot(variant, game, [], ())]
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            events = game.resolve_chance()
        else:
            events = game.apply({d.seat: policy(variant, game, d) for d in pending})
        steps.append(_snapshot(variant, game, game.steps[-1], events))
    transcript = game.transcript()
    record = {
        "name": name,
        "variant": variant.name,
        "engine_version": variant.engine_version,
        "config": variant.config_json(),
        "seed": golden.seed,
        "policy": golden.policy,
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
    """The file's text: Junior's layout for its games, the views layout for the others."""
    return dump_steps(data) if GAMES[data["name"]].one_line_per_step else dump_views(data)


def dump_views(data: dict[str, Any]) -> str:
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


def dump_steps(data: dict[str, Any]) -> str:
    """One line per step, so a diff shows which steps changed (Junior's files)."""
    head = {k: v for k, v in data.items() if k != "steps"}
    lines = [json.dumps(step, separators=(",", ":")) for step in data["steps"]]
    body = json.dumps(head, indent=1)[:-2]
    return body + ',\n "steps": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def stale_files() -> set[Path]:
    """Files in the golden folders that no golden game writes."""
    folders = {golden.folder for golden in GAMES.values()}
    return {p for folder in folders for p in folder.glob("*.json")} - {path_of(name) for name in GAMES}


def main() -> int:
    root = HERE.parent.parent
    for name in GAMES:
        text = dump(playthrough(name))
        path = path_of(name)
        path.parent.mkdir(exist_ok=True)
        old = path.read_text() if path.exists() else None
        path.write_text(text)
        state = "unchanged" if old == text else "written" if old is None else "rewritten"
        print(f"{path.relative_to(root)}: {state} ({len(text) // 1024} KB)")
    for stale in sorted(stale_files()):
        stale.unlink()
        print(f"{stale.relative_to(root)}: removed (no golden game writes it)")
    if missing := missing_variants():
        print(f"no golden game plays {', '.join(missing)}: add one to GAMES", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
