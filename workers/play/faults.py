"""Fault reasons in the store: what ``seat_results.fault_detail`` holds, and how it is summed up.

``fault_detail`` is JSON, written only for a seat with faults::

    {"faults": [{"kind": "exception", "reason": "…ValueError: boom", "count": 2}, …],
     "exit": {"status": 1, "signal": null, "limit": null, "stderr": "…the last 4 KiB"}}

``faults`` holds the seat's distinct reasons (at most a few per kind, each at most 1000
characters: see :mod:`referee.faults`); ``exit`` is how the entrant's bot process ended in that
block (``null`` when unknown), with the end of its stderr. ``sixnimmt league status`` and the
dashboard's match page read it back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.matches import STDERR_TAIL_CHARS, ProcessExit
from referee.clikit import tables
from referee.faults import MAX_REASON_CHARS, FaultKind, bounded, group_reasons, short_reason
from workers.store import repo

MAX_DETAIL_FAULTS = 16
"""Reasons stored per seat (the referee already bounds them; this bounds what the store takes)."""


def seat_fault_detail(
    faults: Mapping[str, int] | Mapping[FaultKind, int],
    reasons: Sequence[tuple[FaultKind, str, int]],
    exit: ProcessExit | None,
) -> str | None:
    """The ``fault_detail`` JSON of one seat; ``None`` for a seat without faults."""
    if not any(faults.values()):
        return None
    detail: dict[str, Any] = {
        "faults": [
            {"kind": FaultKind(kind).value, "reason": bounded(reason, MAX_REASON_CHARS), "count": count}
            for kind, reason, count in reasons[:MAX_DETAIL_FAULTS]
        ],
        "exit": None,
    }
    if exit is not None:
        detail["exit"] = exit.to_json() | {"stderr": exit.stderr[-STDERR_TAIL_CHARS:]}
    return json.dumps(detail, sort_keys=True)


def parse_detail(text: str | None) -> dict[str, Any] | None:
    """A stored ``fault_detail`` (``None`` stays ``None``; anything unreadable reads as no detail)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def describe_exit(exit: dict[str, Any] | None) -> str:
    """One line for a stored process exit."""
    if not exit:
        return "unknown"
    return ProcessExit(exit.get("status"), exit.get("signal"), exit.get("limit")).describe()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def summarise(details: Iterable[dict[str, Any] | None]) -> dict[str, list[dict[str, Any]]]:
    """Faults over many seats' details grouped by cause, most frequent first.

    ``faults``: one entry per cause (:func:`referee.faults.group_reasons`: the kind and the reason
    but for its numbers), with the number of faults, one reason word for word as its example
    (``reason``), the ``cause`` and how many ``distinct`` reasons it groups; ``exits``: each way
    the bot's process ended (only abnormal ones: not status 0) with the last line of its stderr
    and the number of seats it was behind.
    """
    kinds = {kind.value for kind in FaultKind}
    reasons: list[tuple[str, str, int]] = []
    exits: dict[tuple[str, str], int] = {}
    for detail in details:
        if not detail:
            continue
        for fault in detail.get("faults") or ():
            if isinstance(fault, dict) and str(fault.get("kind", "")) in kinds:
                count = int(fault.get("count") or 0)
                reasons.append((str(fault["kind"]), str(fault.get("reason", "")), count))
        exit = detail.get("exit")
        if isinstance(exit, dict) and exit.get("status") != 0:
            key = (describe_exit(exit), _last_line(str(exit.get("stderr") or "")))
            exits[key] = exits.get(key, 0) + 1
    return {
        "faults": [group.to_json() for group in group_reasons(reasons)],
        "exits": [
            {"exit": how, "stderr": line, "seats": count}
            for (how, line), count in sorted(exits.items(), key=lambda item: -item[1])
        ],
    }


def league_reasons(engine: Any, league: Any) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per bot (``name@version``) of a league: its distinct fault reasons and process exits."""
    labels = {v.id: f"{v.bot}@{v.version}" for v in league.entrants}
    details: dict[str, list[dict[str, Any] | None]] = {}
    for version_id, text in repo.fault_details(engine, league.id):
        details.setdefault(labels.get(version_id, f"version {version_id}"), []).append(parse_detail(text))
    return {bot: summarise(found) for bot, found in details.items()}


def print_reasons(reasons: dict[str, dict[str, list[dict[str, Any]]]], limit: int = 5) -> None:
    """The reasons of :func:`league_reasons` as a table, at most ``limit`` of each kind per bot."""
    lines: list[list[object]] = []
    for bot, summary in sorted(reasons.items()):
        for fault in summary["faults"][:limit]:
            lines.append([bot, fault["kind"], fault["count"], short_reason(fault["reason"])])
        hidden = len(summary["faults"]) - limit
        if hidden > 0:
            lines.append([bot, "…", hidden, "more reasons (--json lists them all)"])
        for exit in summary["exits"][:limit]:
            said = f"; stderr: {exit['stderr']}" if exit["stderr"] else ""
            reason = f"process {exit['exit']} (behind {exit['seats']} seats){said}"
            lines.append([bot, "process", exit["seats"], reason])
    tables.print_table(["bot", "fault", tables.right("count"), "reason"], lines)
