"""The Anniversary variant's public events and what one seat sees (:class:`AnniversaryView`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from referee.rules.core import Decision
from referee.rules.core import GameEnded as GameEnded  # the core's game-over event, among this game's


class RoundDealt(NamedTuple):
    """A round was dealt: the rows start with these cards; hands and special cards are secret."""

    round: int
    rows: tuple[tuple[int, ...], ...]
    specials: tuple[int, ...]
    """How many special cards each seat holds now."""


class CardsRevealed(NamedTuple):
    """Everyone's number card of a turn, turned face up at once."""

    round: int
    turn: int
    plays: tuple[tuple[int, int], ...]
    """``(card, seat)`` pairs, ascending by card: the order of placement."""


class SpecialPlayed(NamedTuple):
    """A seat played a special card face up: its kind and targets (the action without its kind)."""

    seat: int
    kind: int
    targets: tuple[int, ...]


class CardShifted(NamedTuple):
    """A "Shift" card moved a number card of the table from one row to a place in another."""

    card: int
    from_row: int
    row: int
    position: int


class RowChosen(NamedTuple):
    """The owner of a low card (rule 4) chose the row to take."""

    seat: int
    card: int
    row: int


class CardPlaced(NamedTuple):
    """A number card went into a row at ``position``; if it took the row, ``taken`` and ``bulls`` say what.

    ``row`` is one past the last row when the card starts a new one ("5th Row"). ``closed``: the
    taken row left the table with the card (the 5th row's end under ``fifth_row_end=next_take``).
    """

    seat: int
    card: int
    row: int
    position: int
    taken: tuple[int, ...]
    bulls: int
    closed: bool


class BlocksRemoved(NamedTuple):
    """A row was taken, so every "Block" card left the table (onto the face-up pile)."""

    rows: tuple[int, ...]


class CardsSetAside(NamedTuple):
    """A "Negative = Positive" card: these cards left the seat's pile; ``bulls`` fewer minus points."""

    seat: int
    card: int
    """The card whose bull heads counted as plus points."""
    cards: tuple[int, ...]
    bulls: int


class SpecialSwapped(NamedTuple):
    """A seat that took a row laid a special card face up beside the special deck."""

    seat: int
    kind: int


class SpecialsReshuffled(NamedTuple):
    """The special deck ran out: the face-up special cards were shuffled into a new deck."""

    cards: int


class SpecialDrawn(NamedTuple):
    """A seat drew the special deck's top card (its kind is secret)."""

    seat: int


class RoundScored(NamedTuple):
    """A round ended: each seat's bull heads of the round and the game totals."""

    round: int
    bulls: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AnniversaryView:
    """What one seat knows: its hand and special cards, the table, every take, every score."""

    seat: int
    players: int
    phase: str
    """``deal``, ``play``, ``special`` (before a card is placed), ``row`` (a low card's row),
    ``take`` (after a take: "Negative = Positive" and the swap), ``draw`` or ``over``."""
    round_no: int
    turn: int
    hand: tuple[int, ...]
    specials: tuple[int, ...]
    """This seat's special cards (kinds, ascending)."""
    special_counts: tuple[int, ...]
    """How many special cards each seat holds."""
    rows: tuple[tuple[int, ...], ...]
    blocked: tuple[bool, ...]
    sevens: tuple[bool, ...]
    piles: tuple[tuple[int, ...], ...]
    set_aside: tuple[int, ...]
    """Cards "Negative = Positive" took out of piles this round (face up)."""
    discard: tuple[int, ...]
    """Special cards face up beside the special deck, in the order they went there."""
    deck_size: int
    scores: tuple[int, ...]
    revealed: tuple[tuple[int, int], ...]
    """This turn's face-up ``(card, seat)`` pairs (empty while cards are chosen)."""
    placing: tuple[int, int] | None
    """The ``(card, seat)`` being placed now ("Replace" may have changed the card)."""
    taken: tuple[int, ...]
    """In the ``take`` phase: the cards the seat being placed just took (they are face up)."""
    played: tuple[int, ...]
    """Special cards each seat has played this turn."""
    decision: Decision | None
    row_capacity: int
    hand_size: int
    max_rows: int
    specials_per_turn: int
    top_card: int

    def unseen(self) -> tuple[int, ...]:
        """Number cards this seat has not seen this round: the other hands and the undealt cards."""
        seen = set(self.hand)
        for part in (*self.rows, *self.piles, self.set_aside):
            seen.update(part)
        seen.update(card for card, _ in self.revealed)
        return tuple(c for c in range(1, self.top_card + 1) if c not in seen)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the view."""
        return {
            "seat": self.seat,
            "players": self.players,
            "phase": self.phase,
            "round_no": self.round_no,
            "turn": self.turn,
            "hand": list(self.hand),
            "specials": list(self.specials),
            "special_counts": list(self.special_counts),
            "rows": [list(r) for r in self.rows],
            "blocked": list(self.blocked),
            "sevens": list(self.sevens),
            "piles": [list(p) for p in self.piles],
            "set_aside": list(self.set_aside),
            "discard": list(self.discard),
            "deck_size": self.deck_size,
            "scores": list(self.scores),
            "revealed": [list(p) for p in self.revealed],
            "placing": None if self.placing is None else list(self.placing),
            "taken": list(self.taken),
            "played": list(self.played),
            "decision": None
            if self.decision is None
            else {
                "kind": self.decision.kind.value,
                "options": [list(o) if isinstance(o, tuple) else o for o in self.decision.options],
            },
        }
