"""The wire's bytes, locked: random legal games of every variant, every view and event as the referee
sends them, digested by kind of message into ``wire_golden.json``.

The file was written by the hand-written codecs that ``referee.wire`` held before its generic codec
(commit 2c6b8e5), so ``test_wire_codec.py`` holds the generic codec to their exact bytes: other
clients and the independent referee read these bytes. The anniversary games, whose messages came
later, were written by the generic codec. Rewrite the file only after a change meant to
alter the wire (a new field, a new game), and review the diff:

    .venv/bin/python tests/referee/wire_golden.py
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.board.rules.board import Board, Tiles
from games.board.rules.brettspiel import Brettspiel, BrettspielConfig
from games.junior.rules.junior_deck import DEFAULT_DECK, load_deck
from referee import wire
from referee.rules import CHANCE, Decision, Event, SeededChance, Variant, View, make_variant
from sixnimmt.v1 import game_pb2

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "wire_golden.json"

SCARCE_ACTION_CARDS = {
    "action_cards_each": 1, "stop_cards": 2, "tile_swap_cards": 1, "skip_cards": 1, "move_to_front_cards": 1,
    "attach_ascending_cards": 1, "one_more_tile_cards": 1,
}  # fmt: skip
"""A deck small enough to run out, so that the discard pile is reshuffled."""
SCARCE_LUCK_CARDS = {"plus_points_cards": 1, "positive_oxen_cards": 2}
ONE_SPECIAL_OF_EACH = {
    "fifth_row_cards": 1, "seven_nimmt_cards": 1, "insert_cards": 1, "replace_cards": 1, "shift_cards": 1,
    "negative_positive_cards": 1, "block_cards": 1,
}  # fmt: skip
"""Seven special cards: the deck runs out, so the face-up ones are reshuffled."""


def _inline_deck() -> dict[str, Any]:
    """The bundled deck under another name: it travels as JSON."""
    return {**load_deck(DEFAULT_DECK).to_json(), "name": "my printed deck"}


def _own_board() -> Variant[Any, Any]:
    """A board game on a layout and tiles of the user's own (the layout travels as JSON)."""
    board = Board.parse([". G . T", ". D D . T", ". R . T", ". +3 . T", ". RR . T", ". . T"])
    tiles = Tiles.from_oxen({7: 4, 50: 3}, 80)
    return Brettspiel(BrettspielConfig(players=3, luck=True, tiles_each=8), board=board, tiles=tiles)


@dataclass(frozen=True)
class Game:
    name: str
    variant: str
    config: dict[str, Any]
    seed: int
    make: Callable[[], Variant[Any, Any]] | None = None

    def build(self) -> Variant[Any, Any]:
        return self.make() if self.make else make_variant(self.variant, self.config)


GAMES: tuple[Game, ...] = (
    Game("classic-4p", "classic", {"players": 4}, 1),
    Game("classic-2p", "classic", {"players": 2, "hands": 2, "target": None}, 2),
    Game("classic-10p", "classic", {"players": 10, "hands": 1, "target": None}, 3),
    Game("classic-tactics", "classic", {"players": 5, "hands": 2, "target": None, "tactics": True}, 4),
    Game("classic-pro", "classic", {"players": 4, "hands": 2, "target": None, "professional": True}, 5),
    Game("junior-basic", "junior-basic", {"players": 3}, 1),
    Game("junior-basic-5p", "junior-basic", {"players": 5}, 2),
    Game("junior-advanced", "junior-advanced", {"players": 4}, 3),
    Game("junior-advanced-nuisance", "junior-advanced", {"players": 2, "nuisance": True}, 4),
    Game("junior-advanced-inline-deck", "junior-advanced", {"players": 3, "deck": _inline_deck()}, 5),
    Game("junior-experts", "junior-experts", {"players": 6}, 6),
    Game("junior-experts-limit", "junior-experts", {"players": 2, "row_limit": 3}, 7),
    Game("board-basic-2p", "board", {"players": 2}, 1),
    Game("board-basic-5p", "board", {"players": 5}, 2),
    Game("board-luck", "board", {"players": 4, "luck": True}, 3),
    Game("board-luck-scarce", "board", {"players": 3, "luck": True, **SCARCE_LUCK_CARDS}, 4),
    Game("board-pro", "board", {"players": 4, "pro": True}, 5),
    Game("board-pro-scarce", "board", {"players": 3, "pro": True, **SCARCE_ACTION_CARDS}, 6),
    Game("board-pro-luck", "board", {"players": 6, "pro": True, "luck": True}, 7),
    Game("board-scarce", "board", {"players": 4, "pro": True, "luck": True, **SCARCE_ACTION_CARDS}, 1),
    Game("board-own-layout", "board", {}, 8, _own_board),
    Game("anniversary-4p", "anniversary", {"players": 4}, 1),
    Game("anniversary-2p", "anniversary", {"players": 2}, 2),
    Game("anniversary-8p", "anniversary", {"players": 8, "hand_size": 10}, 3),
    Game("anniversary-reshuffle", "anniversary",
         {"players": 3, "specials_each": 2, "reshuffle_specials": True, **ONE_SPECIAL_OF_EACH}, 1),
    Game("anniversary-options", "anniversary",
         {"players": 5, "rounds": 3, "specials_per_turn": 2, "keep_specials": True,
          "fifth_row_end": "next_take", "block_end": "turn", "positive_row_first": False}, 5),
)  # fmt: skip
"""The golden games: random legal play from a seed (chance from ``SeededChance(seed)``, each seat's
choice from ``random.Random(seed)`` in seat order)."""


@dataclass(frozen=True)
class Message:
    """One message of a game as the referee writes it, and the domain value it carries."""

    kind: str
    """``view:<phase>`` (any seat's view through the codec), ``request:<decision kind>`` (a pending
    seat's request, its view included) or ``event:<event type>``."""
    data: bytes
    value: View | Event
    decision: Decision | None = None


def messages(game: Game) -> Iterator[Message]:
    """Every message of a golden game, in order: after each step every seat's view, each pending
    seat's request, then the step's events."""
    variant = game.build()
    codec = wire.codec(variant.name)
    rng = random.Random(game.seed)
    chance = SeededChance(game.seed)
    state = variant.initial_state()
    step = 0
    request_id = 0
    while True:
        for seat in range(variant.players):
            view = variant.view(state, seat)
            out = game_pb2.DecisionRequest()
            codec.view_to_wire(view, out)
            yield Message(f"view:{view.phase}", out.SerializeToString(), view, view.decision)
        pending = variant.pending(state)
        if not pending:
            return
        if pending[0].seat == CHANCE:
            actions = {CHANCE: variant.sample_chance(state, chance)}
        else:
            actions = {}
            for decision in pending:
                view = variant.view(state, decision.seat)
                request_id += 1
                out = game_pb2.DecisionRequest()
                wire.request_to_wire(request_id, "m1", variant.name, decision, view, 2000, 10_000, out)
                yield Message(f"request:{decision.kind.value}", out.SerializeToString(), view, decision)
                actions[decision.seat] = rng.choice(decision.options)
        state, events = variant.apply(state, actions)
        step += 1
        sent: list[game_pb2.MatchEvent] = []
        wire.events_to_wire(variant.name, "m1", step, events, sent)
        for event, message in zip(events, sent, strict=True):
            yield Message(f"event:{type(event).__name__}", message.SerializeToString(), event)


def digests(game: Game) -> dict[str, Any]:
    """A game's messages digested: SHA-256 and count per kind, and over all of them in order."""
    every = hashlib.sha256()
    by_kind: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for message in messages(game):
        framed = len(message.data).to_bytes(4, "big") + message.data
        every.update(message.kind.encode() + b"\0" + framed)
        by_kind.setdefault(message.kind, hashlib.sha256()).update(framed)
        counts[message.kind] = counts.get(message.kind, 0) + 1
    return {
        "variant": game.variant,
        "seed": game.seed,
        "digest": every.hexdigest(),
        "kinds": {k: {"count": counts[k], "sha256": h.hexdigest()} for k, h in sorted(by_kind.items())},
    }


def main() -> int:
    data = {game.name: digests(game) for game in GAMES}
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    old = GOLDEN.read_text() if GOLDEN.exists() else None
    GOLDEN.write_text(text)
    print(f"{GOLDEN.relative_to(HERE.parent.parent)}: {'unchanged' if old == text else 'rewritten'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
