"""Hostile: learns every opponent's hand from its own hands in the other rotations of its deal.

A league plays each table as a duplicate block: one deal, replayed once per seat rotation, each
hand going to another seat each time. A process that plays an entrant's seats in several
rotations of one deal holds several hands of it, and the hand it holds at seat S in one rotation
is seat S's hand in every other. This bot keeps, per process, the hand it is dealt at its first
decision of each match, by the deal's starting rows (same rows at the start: same deal), and
tells at each match's first decision what it knows there of its opponents' hands:

- ``RuntimeError("hostile rotations: SUCCEEDED: … opponents' hands {SEAT: [CARDS]} rows […]")``
  when this process has held another hand of the match's deal (the test compares those hands with
  the deal's);
- ``RuntimeError("hostile rotations: blocked: N deals, one hand each; rows […]")`` otherwise, when
  ``__MODE__`` is ``every`` (with ``found``, it stays quiet then and plays on: a warm process
  that faults is retired, and a test that follows one process over several blocks needs it kept).

Either way the report lands in the seat's fault reasons; then it plays its lowest card.
"""

from __future__ import annotations

import json
import threading

from bot_sdk import ClassicBot

MODE = "__MODE__"
_LOCK = threading.Lock()
_HANDS: dict[tuple[int, ...], dict[int, list[int]]] = {}
"""This process's hands: starting rows (a deal) → seat → the hand it held there."""


class Rotations(ClassicBot):
    """Reports what it knows of its opponents' hands at its first decision of each match."""

    started = False

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        if not self.started:
            self.started = True
            rows = tuple(row[0] for row in view.rows)
            with _LOCK:
                seats = _HANDS.setdefault(rows, {})
                seats[view.seat] = sorted(view.hand)
                known = {seat: hand for seat, hand in seats.items() if seat != view.seat}
                deals = len(_HANDS)
            if known:
                raise RuntimeError(
                    f"hostile rotations: SUCCEEDED: {deals} deals; opponents' hands {json.dumps(known)}"
                    f" rows {json.dumps(list(rows))}"
                )
            if MODE == "every":
                raise RuntimeError(
                    f"hostile rotations: blocked: {deals} deals, one hand each; rows {json.dumps(list(rows))}"
                )
        return min(view.hand)
