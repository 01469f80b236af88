"""Classic 6 nimmt!'s wire codec: a declaration, registered with ``referee.wire``."""

from __future__ import annotations

from games.classic.rules.classic import (
    CardPlaced,
    CardsRevealed,
    ClassicView,
    GameEnded,
    HandDealt,
    HandScored,
    RowChosen,
)
from referee.wire import Codec, register

# Classic 6 nimmt!: everything maps by name. The seats asked in one step share the table: its wire
# form is built once and copied into each seat's view.
register(
    Codec(
        ("classic",),
        "classic",
        ClassicView,
        (HandDealt, CardsRevealed, RowChosen, CardPlaced, HandScored, GameEnded),
        shared=("players", "rows", "piles", "scores", "top_card", "row_capacity", "hand_size",
                "professional"),
    )
)
