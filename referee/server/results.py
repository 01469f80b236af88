"""Finished matches' results, kept compact and bounded for GetResult and WatchMatch.

A finished match keeps nothing of its driver (states, views, links, listeners): its result is
written to the wire once, when it ends, and kept as the serialized ``MatchResult``, one ``bytes``
object, which the garbage collector never scans. The latest ``keep`` results within ``max_bytes``
are kept, the oldest dropped first; a dropped match answers ``NOT_FOUND`` saying so.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from referee import wire
from referee.rules.core import Event
from referee.rules.transcript import Transcript, replay_states
from sixnimmt.v1 import game_pb2

if TYPE_CHECKING:
    from referee.server.state import MatchEntry


class FinishedResults:
    """The latest finished results by match id, serialized; at most ``keep`` and ``max_bytes``."""

    def __init__(self, keep: int, max_bytes: int) -> None:
        self.keep = keep
        self.max_bytes = max_bytes
        self._results: OrderedDict[str, bytes] = OrderedDict()
        self.bytes = 0
        """The size of the results kept."""
        self.dropped = 0
        """Results dropped so far to stay within the bounds."""

    def add(self, match_id: str, result: game_pb2.MatchResult) -> None:
        """Keep a finished match's result, dropping the oldest beyond the bounds."""
        data = result.SerializeToString()
        self._results[match_id] = data
        self.bytes += len(data)
        while self._results and (len(self._results) > self.keep or self.bytes > self.max_bytes):
            _, oldest = self._results.popitem(last=False)
            self.bytes -= len(oldest)
            self.dropped += 1

    def get(self, match_id: str) -> game_pb2.MatchResult | None:
        """A kept result, or ``None`` (never finished here, or dropped)."""
        data = self._results.get(match_id)
        return None if data is None else game_pb2.MatchResult.FromString(data)

    def __len__(self) -> int:
        return len(self._results)

    def missing(self, match_id: str) -> str:
        """Why there is no match ``match_id``, in words (the NOT_FOUND message)."""
        return (
            f"no match {match_id!r}: never created here, or finished and its result dropped"
            f" (this referee keeps the latest {self.keep} results within {self.max_bytes >> 20} MiB;"
            f" {self.dropped} dropped so far)"
        )


def result_to_wire(match_id: str, entry: MatchEntry) -> game_pb2.MatchResult:
    """A match's result as the admin API returns it."""
    result = game_pb2.MatchResult(match_id=match_id, variant=entry.driver.variant.name)
    result.status = wire.STATUS_TO_WIRE[entry.status]  # type: ignore[assignment]
    result.error = entry.error
    report = entry.driver.report
    if report is None:
        return result
    outcome = report.outcome
    result.termination = outcome.termination.value
    for seat, stats in enumerate(report.seats):
        wire.seat_result_to_wire(
            seat,
            stats.entrant,
            outcome.scores[seat],
            outcome.ranks[seat],
            stats.faults,
            reasons=stats.reasons,
            defaulted=stats.defaulted,
            decisions=stats.decisions,
            forfeited=stats.forfeited,
            think_ms=round(stats.think_seconds * 1000),
            out=result.seats.add(),
        )
    result.transcript_json, result.digest = report.transcript.text_and_digest()
    return result


def finished_events(result: game_pb2.MatchResult) -> Iterator[tuple[int, tuple[Event, ...]]]:
    """A finished match's public events by step, replayed from its transcript (as the driver
    published them: steps without events left out)."""
    if not result.transcript_json:
        return
    _, _, events = replay_states(Transcript.from_json(json.loads(result.transcript_json)))
    for step, step_events in enumerate(events, 1):
        if step_events:
            yield step, step_events
