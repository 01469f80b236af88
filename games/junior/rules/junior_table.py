"""What lies on a 6 nimmt! Junior table: the configs, rows of cows, the state, events and views.

The engine that moves from state to state is :mod:`games.junior.rules.junior`, which also re-exports
everything here; the deck is :mod:`games.junior.rules.junior_deck`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from games.junior.rules.junior_deck import DEFAULT_DECK, JuniorDeck, load_deck
from referee.rules.config import bounded, check_bounds, option
from referee.rules.core import Action, Decision, Outcome
from referee.rules.core import GameEnded as GameEnded  # the core's game-over event, among this game's
from referee.rules.errors import ConfigError

Rows = tuple[tuple[int, ...], ...]

# -- configs ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JuniorConfig:
    """The numbers of a basic Junior game."""

    players: int = bounded(4, 2, 100, "seats at the table, within the deck's range (default 2–6, assumed)")
    rows: int = bounded(4, 1, 10, "rows on the table (the rulebook's four row cards)")
    deck: JuniorDeck | str | Mapping[str, Any] = bounded(  # noqa: RUF009 (a dataclass field)
        DEFAULT_DECK, doc="a bundled deck file, a path to a deck JSON file, or the deck itself"
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if getattr(self, f.name) is None:  # check_bounds lets None through (optional fields)
                raise ConfigError(f"{option(f.name)} must be set, got None")
        check_bounds(self)
        try:
            deck = load_deck(self.deck)
        except ConfigError as exc:
            raise ConfigError(f"{option('deck')}: {exc}") from None
        object.__setattr__(self, "deck", deck)  # normalised: equal decks, equal configs
        lo, hi = deck.players
        if not lo <= self.players <= hi:
            raise ConfigError(f"the deck {deck.name!r} is for {lo}–{hi} players ({option('players')})")
        if self.dealt() > len(deck):
            raise ConfigError(
                f"the setup needs {self.dealt()} cards, the deck has {len(deck)}"
            )

    def dealt(self) -> int:
        """Cards dealt at setup (hands and row starters)."""
        return 0


@dataclass(frozen=True, slots=True)
class JuniorAdvancedConfig(JuniorConfig):
    """The numbers of the advanced game; ``nuisance`` makes the fewest cards win."""

    hand_size: int = bounded(3, 1, 20, "cards in hand")
    nuisance: bool = bounded(False, doc="the fewest collected cards win (the rulebook's nuisance note)")

    def dealt(self) -> int:
        return self.players * self.hand_size


@dataclass(frozen=True, slots=True)
class JuniorExpertsConfig(JuniorConfig):
    """The numbers of the experts' game."""

    hand_size: int = bounded(3, 1, 20, "cards in hand")
    row_limit: int = bounded(6, 2, 50, "the card that would be a row's sixth collects the others")

    def dealt(self) -> int:
        return self.rows + self.players * self.hand_size


# -- rows and cows: pure helpers shared by the engine and the views ----------------------------


def row_mask(masks: Sequence[int], row: Sequence[int]) -> int:
    """The cows a row shows, as a bit mask."""
    mask = 0
    for card in row:
        mask |= masks[card]
    return mask


def cow_rows(masks: Sequence[int], rows: Rows, card: int) -> tuple[int, ...]:
    """Rules 1 and 2: the rows the card adds a new cow to; every row when it adds none anywhere."""
    mask = masks[card]
    new = tuple([i for i, row in enumerate(rows) if mask & ~row_mask(masks, row)])
    return new or tuple(range(len(rows)))


def cow_takes(masks: Sequence[int], full: int, rows: Rows, card: int, row: int) -> int:
    """Cards collected by placing ``card`` at ``row`` (basic, advanced): the row, if it is then full."""
    cards = rows[row]
    return len(cards) + 1 if row_mask(masks, cards) | masks[card] == full else 0


def matching_rows(masks: Sequence[int], rows: Rows, card: int) -> tuple[int, ...]:
    """Experts: the rows whose last card shares a cow with ``card``."""
    mask = masks[card]
    return tuple([i for i, row in enumerate(rows) if row and masks[row[-1]] & mask])


def experts_takes(masks: Sequence[int], limit: int, rows: Rows, card: int, row: int) -> int:
    """Cards collected by playing ``card`` at ``row`` (experts): the row without a match, or when full."""
    cards = rows[row]
    if not matching_rows(masks, rows, card) or len(cards) + 1 >= limit:
        return len(cards)
    return 0


# -- state, events, view ---------------------------------------------------------------------


class JuniorState(NamedTuple):
    """An immutable Junior game state."""

    phase: int
    seat: int
    """The seat whose turn it is."""
    turn: int
    """Turns completed."""
    rows: Rows
    hands: tuple[tuple[int, ...], ...]
    """Each seat's hand, ascending (always empty in the basic game)."""
    pile: tuple[int, ...]
    """The draw pile as an ascending set: which card comes next is chance's, decided when drawn."""
    collected: tuple[tuple[int, ...], ...]
    """Each seat's collected cards, in the order collected."""
    card: int | None
    """The face-up card waiting for its row: drawn (basic) or played (experts)."""
    outcome: Outcome | None
    pending: tuple[Decision, ...]


class CardsDealt(NamedTuple):
    """Each seat got ``hand_size`` secret cards; the rows start with ``rows`` (experts)."""

    hand_size: int
    rows: Rows


class CardTurned(NamedTuple):
    """Basic game: the top card of the pile was turned over for ``seat``."""

    seat: int
    card: int


class CardDrawn(NamedTuple):
    """``seat`` drew a secret card into its hand; ``pile`` cards are left."""

    seat: int
    pile: int


class CardPlayed(NamedTuple):
    """Experts: ``seat`` played ``card`` face up; its row comes next."""

    seat: int
    card: int


class CardPlaced(NamedTuple):
    """``card`` went to the end of ``row``."""

    seat: int
    card: int
    row: int


class RowCollected(NamedTuple):
    """``seat`` collected ``cards`` from ``row``; ``total`` is its count so far."""

    seat: int
    row: int
    cards: tuple[int, ...]
    total: int


@dataclass(frozen=True, slots=True)
class JuniorView:
    """What one seat knows: the rows, its own hand, every album, how many cards are hidden where.

    ``deck`` (the cows of every card id) is not in :meth:`to_json`: it is part of the match
    config, sent once.
    """

    seat: int
    players: int
    mode: str
    """``"basic"``, ``"advanced"`` or ``"experts"``."""
    phase: str
    turn: int
    to_move: int
    rows: Rows
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    collected: tuple[tuple[int, ...], ...]
    """Every seat's collected cards (each was face up in a row when collected)."""
    pile_size: int
    card: int | None
    """The face-up card waiting for its row (basic: drawn for ``to_move``; experts: played)."""
    decision: Decision | None
    fewest_wins: bool
    row_limit: int
    """Experts: the card that would be a row's ``row_limit``-th collects the others; else 0."""
    deck: JuniorDeck

    @property
    def scores(self) -> tuple[int, ...]:
        """Cards collected per seat."""
        return tuple(len(album) for album in self.collected)

    def cows(self, card: int) -> tuple[str, ...]:
        """The keys of the cows on ``card``."""
        return self.deck.cow_keys(card)

    def rows_for(self, card: int) -> tuple[int, ...]:
        """The rows ``card`` may go to (experts: matching rows, or every row to collect one)."""
        masks = self.deck.masks
        if self.mode == "experts":
            return matching_rows(masks, self.rows, card) or tuple(range(len(self.rows)))
        return cow_rows(masks, self.rows, card)

    def takes(self, card: int, row: int) -> int:
        """How many cards this seat collects by putting ``card`` at ``row`` now."""
        if self.mode == "experts":
            return experts_takes(self.deck.masks, self.row_limit, self.rows, card, row)
        return cow_takes(self.deck.masks, self.deck.full, self.rows, card, row)

    def unseen(self) -> tuple[int, ...]:
        """The cards this seat cannot see: the pile and the other hands."""
        seen = set(self.hand)
        for part in (*self.rows, *self.collected):
            seen.update(part)
        if self.card is not None:
            seen.add(self.card)
        return tuple(c for c in range(len(self.deck)) if c not in seen)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the view."""
        return {
            "seat": self.seat,
            "players": self.players,
            "mode": self.mode,
            "phase": self.phase,
            "turn": self.turn,
            "to_move": self.to_move,
            "rows": [list(r) for r in self.rows],
            "hand": list(self.hand),
            "hand_sizes": list(self.hand_sizes),
            "collected": [list(c) for c in self.collected],
            "pile_size": self.pile_size,
            "card": self.card,
            "decision": None
            if self.decision is None
            else {"kind": self.decision.kind.value, "options": [_list(o) for o in self.decision.options]},
            "fewest_wins": self.fewest_wins,
            "row_limit": self.row_limit,
        }


def _list(action: Action) -> Any:
    return list(action) if isinstance(action, tuple) else action
