"""6 nimmt! Junior's wire codec: a declaration and its deck ``Special``."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from games.junior.rules import junior, junior_deck
from referee.rules.errors import RulesError
from referee.wire import Codec, Special, WireError, register
from sixnimmt.v1 import junior_pb2

# 6 nimmt! Junior, its three modes on one message set. A view carries its deck the way the match
# config does: a bundled deck by its file name, any other deck as JSON (serialised once per deck
# here, parsed once per text in the SDK).


@lru_cache(maxsize=16)
def _junior_deck(name: str, text: str) -> junior_deck.JuniorDeck:
    """The deck a Junior view names: a bundled file's ``name``, or the deck as JSON ``text``."""
    spec: str | dict[str, Any] = name
    if name and ("/" in name or "\\" in name):
        raise WireError(f"a Junior view names its deck by a path, not a bundled file name: {name!r}")
    if not name:
        try:
            loaded = json.loads(text) if text else None
        except ValueError as exc:
            raise WireError(f"a Junior view's deck is not JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise WireError("a Junior view holds no deck")
        spec = loaded
    try:
        deck = junior_deck.load_deck(spec)
    except RulesError as exc:
        raise WireError(f"a Junior view's deck does not load: {exc}") from exc
    if name and deck.source != name:
        raise WireError(f"a Junior view names {name!r}, which is no bundled deck")
    return deck


class _JuniorDeck:
    """``JuniorView.deck`` as ``deck_name`` or ``deck_json``."""

    def __init__(self) -> None:
        self._deck_of: junior_deck.JuniorDeck | None = None
        self._deck_text = ""

    FIELDS = ("deck_name", "deck_json")

    def to_wire(self, view: junior.JuniorView, out: junior_pb2.JuniorView) -> None:
        deck = view.deck
        if deck.source:
            out.deck_name = deck.source
            return
        if deck is not self._deck_of:
            self._deck_text = json.dumps(deck.to_json(), sort_keys=True, separators=(",", ":"))
            self._deck_of = deck
        out.deck_json = self._deck_text

    @staticmethod
    def from_wire(message: junior_pb2.JuniorView) -> junior_deck.JuniorDeck:
        return _junior_deck(message.deck_name, message.deck_json)


_deck = _JuniorDeck()
register(
    Codec(
        ("junior-basic", "junior-advanced", "junior-experts"),
        "junior",
        junior.JuniorView,
        (junior.CardsDealt, junior.CardTurned, junior.CardDrawn, junior.CardPlayed, junior.CardPlaced,
         junior.RowCollected, junior.GameEnded),
        special={junior.JuniorView: {"deck": Special(_deck.to_wire, _deck.from_wire, _deck.FIELDS)}},
    )
)
