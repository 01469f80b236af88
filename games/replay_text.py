"""The words every game's replay lines are made of: a seat's name, a list of cards, a row as people
count it (from 1), and the line of an event a game's replay does not word itself.

The games' replay modules (``games/<name>/replay.py``), ``sixnimmt replay`` and the dashboard's
generic replay (``dashboard.replay``) write their event lines with them. Rows, spaces and places
are numbered from 1 in every line a person reads (the engines, the wire and the transcripts count
from 0). This module sits below them all, as pure as the rules (import-linter holds it to the
rules' contract), so a game's replay never imports the dashboard, the host that loads it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from referee.rules.core import CHANCE, Event, event_to_json


def seat_name(names: Sequence[str], seat: int) -> str:
    """A seat's name in a replay (``chance`` for the chance pseudo-seat)."""
    if seat == CHANCE:
        return "chance"
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def cards_text(cards: Sequence[int]) -> str:
    """Cards as numbers separated by spaces."""
    return " ".join(str(c) for c in cards)


def row_name(row: int) -> str:
    """A row as people count it: ``row 3`` for the engine's row 2 (every event counts rows from 0)."""
    return f"row {row + 1}"


Describe = Callable[[str, dict[str, Any], str, Sequence[str], Sequence[dict[str, Any]]], str | None]
"""A game's replay hook: an event's line from its type's name, its JSON form, the seat's name,
every seat's name and the step's earlier events (None: the generic line)."""


def event_line(
    kind: str,
    fields: dict[str, Any],
    names: Sequence[str],
    describe: Describe | None = None,
    before: Sequence[dict[str, Any]] = (),
) -> str:
    """One line of plain text for an event given as its type's name and its JSON form
    (:func:`~referee.rules.core.event_to_json`): the game's line (``describe``, its replay
    module's hook) where it has one, else the game-over line or the event's fields."""
    seat = fields.get("seat")
    who = seat_name(names, seat) if isinstance(seat, int) else ""
    line = None if describe is None else describe(kind, fields, who, names, before)
    if line is not None:
        return str(line)
    if kind == "GameEnded":  # the core's one game-over event
        parts = ", ".join(
            f"{seat_name(names, s)} {score} (#{rank})"
            for s, (score, rank) in enumerate(zip(fields["scores"], fields["ranks"], strict=True))
        )
        return f"Game over ({str(fields['termination']).replace('_', ' ')}): {parts}"
    body = ", ".join(f"{k}={field_text(v)}" for k, v in fields.items() if k not in ("type", "seat"))
    return f"{who + ': ' if who else ''}{kind} {body}".strip()


def event_lines(events: Sequence[Event], names: Sequence[str], describe: Describe | None = None) -> list[str]:
    """One line for each of a step's events (an event may read the step's earlier ones)."""
    before: list[dict[str, Any]] = []
    lines = []
    for event in events:
        fields = event_to_json(event)
        lines.append(event_line(type(event).__name__, fields, names, describe, before))
        before.append(fields)
    return lines


def field_text(value: Any) -> str:
    """An event field's value in a line: lists and objects as compact JSON, the rest as text."""
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (list, dict)) else str(value)
