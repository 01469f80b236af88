"""The 6 nimmt! Junior deck: cow cards as data, loaded and validated once.

The rulebook does not print the deck, so it is data (``data/junior_deck.json``, the project's
assumption from RULES-NOTES.md) that a user who owns the printed game can replace: a config's
``deck`` is the name of a bundled deck file, a path to a JSON file, or the JSON structure
itself. A card is identified by its index in ``cards``; internally its cows are a bit mask
(bit ``i`` is ``cows[i]``), so "shares a cow" and "adds a new cow" are one ``&`` each.

File format::

    {"name": "…", "players": {"min": 2, "max": 6},
     "cows": [{"key": "zebu", "name": "Zebu", "country": "Africa"}, …],
     "cards": [["zebu"], ["zebu", "holstein"], …]}

``name``, ``note``, ``players`` and a cow's ``name`` and ``country`` are optional.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from referee.rules.errors import ConfigError

DEFAULT_DECK = "junior_deck.json"
"""The bundled default deck (an assumption: the cow edition's deck is not published)."""

_MAX_CARDS = 1000


class Cow(NamedTuple):
    """One of the deck's cows."""

    key: str
    name: str
    country: str


@dataclass(frozen=True, slots=True)
class JuniorDeck:
    """A validated Junior deck: the cows, each card's cows, and the player range it is made for."""

    cows: tuple[Cow, ...]
    cards: tuple[tuple[int, ...], ...]
    """Each card's cows as ascending indices into :attr:`cows`; a card's id is its index here."""
    name: str = ""
    players: tuple[int, int] = (2, 6)
    """The smallest and largest table the deck is meant for (inclusive)."""
    source: str | None = None
    """The bundled file it came from; ``None`` for a deck given inline or read from a path."""
    masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Each card's cows as a bit mask (bit ``i`` is ``cows[i]``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "masks", tuple(sum(1 << cow for cow in card) for card in self.cards))

    @property
    def full(self) -> int:
        """The mask of a row that shows every cow."""
        return (1 << len(self.cows)) - 1

    def __len__(self) -> int:
        return len(self.cards)

    def cow_keys(self, card: int) -> tuple[str, ...]:
        """The keys of the cows on ``card``."""
        return tuple(self.cows[cow].key for cow in self.cards[card])

    def to_json(self) -> dict[str, Any]:
        """The deck in its file format (what a transcript embeds for a deck that is not bundled)."""
        return {
            "name": self.name,
            "players": {"min": self.players[0], "max": self.players[1]},
            "cows": [cow._asdict() for cow in self.cows],
            "cards": [list(self.cow_keys(card)) for card in range(len(self.cards))],
        }


def load_deck(spec: JuniorDeck | str | Mapping[str, Any]) -> JuniorDeck:
    """A deck from a config value: a deck, a bundled file name, a JSON file path, or the structure.

    Anything malformed raises :class:`ConfigError` naming the deck and the problem.
    """
    if isinstance(spec, JuniorDeck):
        return spec
    if isinstance(spec, Mapping):
        return parse_deck(spec, "the inline deck")
    if not isinstance(spec, str) or not spec:
        raise ConfigError(f"a Junior deck is a file name, a path or a JSON object, got {spec!r}")
    bundled = resources.files("games.junior.rules").joinpath("data", spec)
    if "/" not in spec and "\\" not in spec and bundled.is_file():
        return _bundled(spec)
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the Junior deck file {spec!r}: {exc.strerror or exc}") from exc
    return parse_deck(_json(text, spec), spec)


@lru_cache(maxsize=8)
def _bundled(name: str) -> JuniorDeck:
    text = resources.files("games.junior.rules").joinpath("data", name).read_text(encoding="utf-8")
    deck = parse_deck(_json(text, name), name)
    return JuniorDeck(deck.cows, deck.cards, deck.name, deck.players, source=name)


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the Junior deck {where!r} is not JSON: {exc}") from exc


def parse_deck(data: Any, where: str = "the deck") -> JuniorDeck:
    """Validate a deck structure (see the module docstring) and build the deck."""

    def fail(problem: str) -> ConfigError:
        return ConfigError(f"bad Junior deck in {where}: {problem}")

    if not isinstance(data, Mapping):
        raise fail(f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - {"name", "note", "players", "cows", "cards"})
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}")
    raw_cows = data.get("cows")
    if not isinstance(raw_cows, list) or not raw_cows:
        raise fail('"cows" must be a non-empty list')
    cows: list[Cow] = []
    for i, raw in enumerate(raw_cows):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str) or not raw["key"]:
            raise fail(f'cow {i} must be an object with a non-empty "key"')
        extra = sorted(set(raw) - {"key", "name", "country"})
        if extra:
            raise fail(f"cow {raw['key']!r} has unknown key(s) {', '.join(extra)}")
        name, country = raw.get("name", raw["key"]), raw.get("country", "")
        if not isinstance(name, str) or not isinstance(country, str):
            raise fail(f"cow {raw['key']!r}: name and country must be strings")
        cows.append(Cow(raw["key"], name, country))
    index = {cow.key: i for i, cow in enumerate(cows)}
    if len(index) != len(cows):
        raise fail("two cows share a key")
    raw_cards = data.get("cards")
    if not isinstance(raw_cards, list) or not raw_cards or len(raw_cards) > _MAX_CARDS:
        raise fail(f'"cards" must be a list of 1 to {_MAX_CARDS} cards')
    cards: list[tuple[int, ...]] = []
    for i, raw in enumerate(raw_cards):
        if not isinstance(raw, list) or not raw:
            raise fail(f"card {i} must be a non-empty list of cow keys, got {raw!r}")
        missing = [key for key in raw if not isinstance(key, str) or key not in index]
        if missing:
            raise fail(f"card {i} shows unknown cow(s) {missing!r}")
        if len(set(raw)) != len(raw):
            raise fail(f"card {i} shows a cow twice: {raw!r}")
        cards.append(tuple(sorted(index[key] for key in raw)))
    unused = [cow.key for i, cow in enumerate(cows) if not any(i in card for card in cards)]
    if unused:
        raise fail(f"no card shows {', '.join(unused)}, so no row could ever show every cow")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise fail('"name" must be a string')
    players = data.get("players", {"min": 2, "max": 6})
    if (
        not isinstance(players, Mapping)
        or set(players) != {"min", "max"}
        or not all(type(v) is int for v in players.values())
        or not 1 <= players["min"] <= players["max"]
    ):
        raise fail(f'"players" must be {{"min": m, "max": n}} with 1 ≤ m ≤ n, got {players!r}')
    return JuniorDeck(tuple(cows), tuple(cards), name, (players["min"], players["max"]))
