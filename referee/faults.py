"""Fault kinds and reasons: the one owner every layer imports (driver, wire, SDK, league, dashboard).

It sits beside :mod:`referee.settings`, outside the driver, because the SDK (which may not import
the driver) reports a bot's exceptions and shows the referee's fault notices, and the league stores
faults by kind. A :class:`FaultKind` is a ``str``: ``FaultKind.TIMEOUT == "timeout"``, so JSON,
metrics labels and store columns use its value without a conversion table of their own.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

MAX_REASON_CHARS = 1000
"""A fault's reason is cut to this many characters (its end kept: a traceback ends with the error)."""
MAX_REASONS = 8
"""Distinct causes kept per seat (:func:`cause_of`); later ones are counted under :data:`OTHER_REASONS`."""
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
    """Count one fault of ``kind`` for ``reason`` in a bounded tally, one entry per cause.

    A fault of a cause already in the tally (:func:`cause_of`: the same kind and the same reason
    but for its numbers) is counted under that entry, whose reason stays the first example; so a
    bot that plays a card it does not hold, card after card, fills one entry, not
    :data:`MAX_REASONS` of them and then :data:`OTHER_REASONS`.
    """
    key = (kind, bounded(reason))
    if key not in reasons:
        cause = cause_of(key[1])
        key = next((k for k in reasons if k[0] == kind and cause_of(k[1]) == cause), key)
    if key not in reasons and len(reasons) >= MAX_REASONS:
        key = (kind, OTHER_REASONS)
    reasons[key] = reasons.get(key, 0) + 1


_ID = re.compile(r"\b(?=[0-9a-f-]*\d)(?=[0-9a-f-]*[a-f])[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.IGNORECASE)
"""A match id, token or digest: hex, at least 8 digits, with a letter and a digit."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBERS = re.compile(r"#(?:,\s*(?:#|…|\.\.\.))+")
"""A list of numbers (options, a hand, a row), once its numbers are ``#``: one ``#``, whatever its length."""


@functools.lru_cache(maxsize=4096)
def cause_of(reason: str) -> str:
    """What ``reason`` says without its variable parts: the key faults are grouped by.

    Card numbers, rows, times, counts and ids become ``#`` (a list of them, of any length, one ``#``); a
    traceback is its error line so normalised, and where it was raised (file, line and function
    kept: two bugs raising the same error are two causes). ``"105 is not a legal card decision
    (options: 3, 17, …)"`` and ``"1000 is not a legal card decision (options: 4, 8)"`` have one
    cause.
    """
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    frames = _FRAME.findall(reason)
    where = ""
    if frames and len(lines) > 1:
        path, line, function = frames[-1]
        where = f" (at {PurePath(path).name}:{line}, in {function})"
        lines = lines[-1:]
    text = _NUMBER.sub("#", _ID.sub("#", " ".join(lines)))
    return _NUMBERS.sub("#", text) + where


@dataclass(frozen=True, slots=True)
class FaultGroup:
    """Faults of one cause (:func:`cause_of`): their kind, how many, and one of them as it was said."""

    kind: FaultKind
    cause: str
    count: int
    example: str
    """A reason of the group, word for word (the group's most frequent; the first seen of equals)."""
    distinct: int = 1
    """How many different reasons the group holds (1: every fault said :attr:`example`)."""

    def label(self) -> str:
        """``illegal ×16``, with ``, for example`` when the reasons differ (in their numbers)."""
        return f"{self.kind.value} ×{self.count}" + (", for example" if self.distinct > 1 else "")

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form; ``reason`` is the example (what the tallies of reasons call it)."""
        return {
            "kind": self.kind.value,
            "count": self.count,
            "reason": self.example,
            "cause": self.cause,
            "distinct": self.distinct,
        }


def group_reasons(reasons: Iterable[tuple[FaultKind | str, str, int]]) -> list[FaultGroup]:
    """Fault reasons ``(kind, reason, count)`` of any number of seats grouped by cause, most
    frequent first; each group's count is the sum of its reasons' and its example one of them.

    The one grouping every report of faults uses (``bot play``, ``bot check``, ``bot submit``,
    ``league status``, the dashboard): one bug is one row, with a concrete example.
    :data:`OTHER_REASONS` (a seat's tally was full) stays a group of its own.
    """
    counts: dict[tuple[FaultKind, str], int] = {}
    examples: dict[tuple[FaultKind, str], dict[str, int]] = {}
    for kind, reason, count in reasons:
        key = (FaultKind(kind), reason if reason == OTHER_REASONS else cause_of(reason))
        counts[key] = counts.get(key, 0) + count
        said = examples.setdefault(key, {})
        said[reason] = said.get(reason, 0) + count
    groups = [
        FaultGroup(kind, cause, counts[(kind, cause)], max(said, key=lambda r: said[r]), len(said))
        for (kind, cause), said in examples.items()
    ]
    return sorted(groups, key=lambda group: -group.count)


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
