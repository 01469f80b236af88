"""Bot base classes: one bot object plays one seat of one match.

The runner (the local arena now, the gRPC runner later) makes a fresh object per
(match, seat), sets :attr:`Bot.seat` and :attr:`Bot.rng` (seeded per match and seat, so a
bot that draws its randomness from ``self.rng`` plays reproducibly), calls
:meth:`Bot.on_start`, then :meth:`Bot.decide` for every decision of that seat, and
:meth:`Bot.on_events` with the public events as they happen, and :meth:`Bot.on_fault` when the
referee charges the seat a fault.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar

from referee.faults import FaultNotice
from referee.rules.cards import bull_heads
from referee.rules.core import Action, Event, Outcome, View


def is_action(value: Any) -> bool:
    """Whether ``value`` is an action: an ``int`` or a tuple of ``int`` (not a bool, an ``IntEnum``
    or a numpy integer, which the wire refuses; return the option itself from the decision)."""
    if type(value) is int:
        return True
    return type(value) is tuple and all(type(v) is int for v in value)


class Bot:
    """The base of every bot."""

    variants: ClassVar[tuple[str, ...]] = ()
    """The variants this bot can play (canonical names)."""

    seat: int = -1
    rng: random.Random

    def on_start(self, seat: int, variant: str, config: dict[str, Any]) -> None:
        """Called once before the first decision; override to set up per-game state."""

    def decide(self, view: View) -> Action:
        """Answer the pending decision in ``view.decision``."""
        raise NotImplementedError

    def on_events(self, events: Sequence[Event]) -> None:
        """Called with the public events of every step of the game (override to track them)."""

    def on_game_over(self, outcome: Outcome) -> None:
        """Called once when the game ends."""

    def on_fault(self, notice: FaultNotice) -> None:
        """Called when the referee charges this seat a fault (``notice.kind``, ``.request_id``,
        ``.reason``); the runner has logged it to stderr already. Override to react."""


def row_heads(row: Sequence[int]) -> int:
    """The bull heads in a row."""
    return sum(bull_heads(card) for card in row)


def fewest_heads_row(rows: Sequence[Sequence[int]]) -> int:
    """The index of the row with the fewest bull heads (the first one on a tie)."""
    heads = [row_heads(row) for row in rows]
    return heads.index(min(heads))
