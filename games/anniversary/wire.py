"""The anniversary variant's wire codec: a declaration, registered with ``referee.wire``."""

from __future__ import annotations

from games.anniversary.rules import anniversary_view
from referee.wire import Codec, register

# The 6 nimmt! 25th-anniversary variant: everything maps by name (a (card, seat) pair is a
# ClassicPlay, the card being placed one that is absent while cards are chosen). The seats asked
# in one step share the table, built once and copied as classic's.
a = anniversary_view
register(
    Codec(
        ("anniversary",),
        "anniversary",
        a.AnniversaryView,
        (a.RoundDealt, a.CardsRevealed, a.SpecialPlayed, a.CardShifted, a.RowChosen, a.CardPlaced,
         a.BlocksRemoved, a.CardsSetAside, a.SpecialSwapped, a.SpecialsReshuffled, a.SpecialDrawn,
         a.RoundScored, a.GameEnded),
        shared=("players", "rows", "blocked", "sevens", "piles", "set_aside", "discard", "scores",
                "row_capacity", "hand_size", "max_rows", "specials_per_turn", "top_card"),
    )
)
