"""A compact notation for Junior positions: a card is its cows' country letters.

``A`` Africa (Zebu), ``G`` Germany (Holstein), ``I`` India (water buffalo), ``J`` Japan (Wagyu),
``N`` North America (bison), ``S`` Scotland (Galloway). ``"AG"`` is the Zebu+Holstein card.
Rows are separated by ``/``, cards by spaces, ``.`` is an empty row: ``"A G / I S / . / N"``.
Each written card gets a distinct id of the default deck with exactly those cows.
"""

from __future__ import annotations

from games.junior.rules.junior_deck import JuniorDeck

LETTERS = {"A": "zebu", "G": "holstein", "I": "water_buffalo", "J": "wagyu", "N": "bison", "S": "galloway"}


class Cards:
    """Hands out deck ids for written cards, never the same id twice."""

    def __init__(self, deck: JuniorDeck) -> None:
        self.deck = deck
        self.used: set[int] = set()
        self._index = {cow.key: i for i, cow in enumerate(deck.cows)}

    def card(self, spec: str) -> int:
        """A fresh id of a card showing exactly the cows ``spec`` names."""
        want = tuple(sorted(self._index[LETTERS[letter]] for letter in spec))
        for card, cows in enumerate(self.deck.cards):
            if cows == want and card not in self.used:
                self.used.add(card)
                return card
        raise ValueError(f"no unused {spec!r} card left in the deck")

    def cards(self, text: str) -> list[int]:
        """Space-separated cards (``"."`` alone is none)."""
        return [self.card(spec) for spec in text.split() if spec != "."]

    def rows(self, text: str) -> list[list[int]]:
        """Rows (or hands) separated by ``/``."""
        return [self.cards(part) for part in text.split("/")]

    hands = rows


def spell(deck: JuniorDeck, card: int) -> str:
    """The notation of one card."""
    by_key = {key: letter for letter, key in LETTERS.items()}
    return "".join(sorted(by_key[key] for key in deck.cow_keys(card)))


def spell_rows(deck: JuniorDeck, rows: tuple[tuple[int, ...], ...]) -> str:
    """The notation of a table of rows."""
    return " / ".join(" ".join(spell(deck, c) for c in row) or "." for row in rows)
