"""Fault kinds and reasons: the one owner every layer imports (driver, wire, SDK, league, dashboard).

It sits beside :mod:`referee.settings`, outside the driver, because the SDK (which may not import
the driver) reports a bot's exceptions and shows the referee's fault notices, and the league stores
faults by kind. A :class:`FaultKind` is a ``str``: ``FaultKind.TIMEOUT == "timeout"``, so JSON,
metrics labels and store columns use its value without a conversion table of their own.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import PurePath

MAX_REASON_CHARS = 1000
"""A fault's reason is cut to this many characters (its end kept: a traceback ends with the error)."""
MAX_REASONS = 8
"""Distinct reasons kept per seat; later ones are counted under :data:`OTHER_REASONS`."""
OTHER_REASONS = "(other reasons)"


class FaultKind(enum.StrEnum):
    """Why a seat got the default action instead of its own."""

    TIMEOUT = "timeout"
    """No answer within the decision time plus the seat's time bank."""
    CRASH = "crash"
    """The connection broke: the process died or the stream failed."""
    DISCONNECT = "disconnect"
    """The bot never connected, or closed its stream while its matches were running."""
    ILLEGAL = "illegal"
    """The action is not among the legal options, or the reply holds no action."""
    PROTOCOL = "protocol"
    """A second answer to a request, an undecodable or oversized message, or a flood."""
    EXCEPTION = "exception"
    """The bot raised instead of deciding (the SDK reports it with the error's message)."""


@dataclass(frozen=True, slots=True)
class FaultNotice:
    """A fault as the referee tells it to the bot that committed it (and logs it)."""

    kind: FaultKind
    match_id: str
    seat: int
    request_id: int
    """The decision request the fault is about; 0 for a fault of no single request."""
    reason: str


def bounded(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters, keeping its end (where a traceback names the error)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return "…" + text[-(limit - 1) :]


def add_reason(reasons: dict[tuple[FaultKind, str], int], kind: FaultKind, reason: str) -> None:
    """Count one fault of ``kind`` for ``reason`` in a bounded tally (see :data:`MAX_REASONS`)."""
    key = (kind, bounded(reason))
    if key not in reasons and len(reasons) >= MAX_REASONS:
        key = (kind, OTHER_REASONS)
    reasons[key] = reasons.get(key, 0) + 1


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def short_reason(reason: str) -> str:
    """A reason on one line: a traceback becomes its error and where it was raised."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else ""
    frames = _FRAME.findall(reason)
    if not frames:
        return lines[-1]
    path, line, function = frames[-1]
    return f"{lines[-1]} (at {PurePath(path).name}:{line}, in {function})"
