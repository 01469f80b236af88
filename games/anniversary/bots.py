"""Anniversary reference bots: random, and a heuristic that spends special cards to avoid takes.

:class:`RandomBot` picks uniformly among the legal options of every decision (passing
included). :class:`HeuristicBot` plays the card that takes the fewest bull heads on the table as
it is (a low card counts its cheapest row), preferring cards that land far from a row's end;
before its card is placed it plays the special card that saves the most bull heads when that is
at least :attr:`HeuristicBot.min_saving`; after a take it plays "Negative = Positive" on the
taken card with the most bull heads and swaps a "Block" or "Replace" for a fresh card.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.anniversary.sdk import (
    PASS,
    SWAP,
    AnniversaryBot,
    AnniversaryView,
    Special,
    Table,
    insert_position,
    placement_cost,
    table_of,
    target_row,
)
from referee.rules.cards import bull_heads
from referee.rules.core import Action


class RandomBot(AnniversaryBot):
    """Uniformly random number cards, special cards (or none), rows and swaps."""

    def choose_card(self, view: AnniversaryView) -> int:
        return self.rng.choice(view.hand)

    def choose_special(self, view: AnniversaryView) -> Action:
        assert view.decision is not None
        return self.rng.choice(view.decision.options)

    def choose_take(self, view: AnniversaryView) -> Action:
        assert view.decision is not None
        return self.rng.choice(view.decision.options)

    def choose_row(self, view: AnniversaryView) -> int:
        assert view.decision is not None
        row = self.rng.choice(view.decision.options)
        assert isinstance(row, int)
        return row


def cost_after(table: Table, card: int, option: Sequence[int], capacity: int) -> int:
    """The bull heads ``card`` takes right away if its owner plays special card ``option`` first."""
    if not option:
        return placement_cost(table, card, capacity)
    kind, *targets = option
    if kind in (Special.FIFTH_ROW, Special.SEVEN_NIMMT, Special.INSERT):
        return 0
    if kind == Special.REPLACE:
        return placement_cost(table, targets[0], capacity)
    rows = list(table.rows)
    blocked = list(table.blocked)
    if kind == Special.SHIFT:
        moved, row = targets
        source = next(r for r, cards in enumerate(rows) if moved in cards)
        rows[source] = tuple(c for c in rows[source] if c != moved)
        at = insert_position(rows[row], moved)
        rows[row] = (*rows[row][:at], moved, *rows[row][at:])
    elif kind == Special.BLOCK:
        blocked[targets[0]] = True
    return placement_cost(Table(tuple(rows), tuple(blocked), table.sevens), card, capacity)


class HeuristicBot(AnniversaryBot):
    """The cheapest card now; a special card when it saves enough; "Negative = Positive" at a take."""

    min_saving = 2
    """Bull heads a special card must save before it is played."""
    swapped_kinds = (Special.BLOCK, Special.REPLACE)
    """Kinds this bot swaps away when it takes a row (the ones that save the least for it)."""

    def choose_card(self, view: AnniversaryView) -> int:
        table = table_of(view)
        capacity = view.row_capacity

        def risk(card: int) -> tuple[int, int]:
            cost = placement_cost(table, card, capacity)
            row = target_row(table, card)
            if cost or row < 0:
                return cost, -card  # taking anyway: get rid of a high card
            # Safe for now; a small gap and a short row keep it safe when others play too.
            return 0, card - view.rows[row][-1] + 10 * len(view.rows[row])

        return min(view.hand, key=risk)

    def choose_special(self, view: AnniversaryView) -> Action:
        assert view.decision is not None and view.placing is not None
        card = view.placing[0]
        table = table_of(view)
        plays = [o for o in view.decision.options if isinstance(o, tuple)]
        costs = {o: cost_after(table, card, o, view.row_capacity) for o in plays}
        best = min(plays, key=lambda o: (costs[o], o))
        if costs[PASS] - costs[best] >= self.min_saving:
            return best
        return PASS

    def choose_take(self, view: AnniversaryView) -> Action:
        assert view.decision is not None
        options = [o for o in view.decision.options if isinstance(o, tuple) and o]
        positive = [o for o in options if o[0] == Special.NEGATIVE_POSITIVE]
        if positive:
            return max(positive, key=lambda o: (bull_heads(o[1]), o[1]))
        for kind in self.swapped_kinds:
            # The option itself, not ``(SWAP, kind)``: an action holds plain ints, never a Special.
            swap = next((o for o in options if o == (SWAP, kind)), None)
            if swap is not None:
                return swap
        return PASS
