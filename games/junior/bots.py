"""Junior reference bots: a random one and a one-turn heuristic per mode.

The heuristics look one turn ahead. Collecting is worth the cards collected (negative when the
fewest cards win); leaving a row that a card from the unseen ones would complete is a risk of
giving those cards to the next seat, estimated with the share of unseen cards that complete it.
``make bench`` reports how they fare against random opponents (``bot.junior.<mode>.<bot>.score``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from games.junior.rules.junior import JuniorView, Rows, row_mask
from games.junior.sdk import JuniorAdvancedBot, JuniorBasicBot, JuniorExpertsBot
from referee.rules.core import Action


def _pick(options: Sequence[Action], rng: random.Random) -> Action:
    return options[int(rng.random() * len(options))]


class RandomBasicBot(JuniorBasicBot):
    """A uniformly random legal row."""

    def choose_row(self, view: JuniorView) -> int:
        assert view.decision is not None
        row = _pick(view.decision.options, self.rng)
        assert isinstance(row, int)
        return row


class RandomAdvancedBot(JuniorAdvancedBot):
    """A uniformly random legal (card, row)."""

    def choose_play(self, view: JuniorView) -> tuple[int, int]:
        assert view.decision is not None
        card, row = _pick(view.decision.options, self.rng)  # type: ignore[misc]
        return card, row


class RandomExpertsBot(JuniorExpertsBot):
    """A uniformly random hand card, then a uniformly random legal row."""

    def choose_card(self, view: JuniorView) -> int:
        card = _pick(view.hand, self.rng)
        assert isinstance(card, int)
        return card

    def choose_row(self, view: JuniorView) -> int:
        assert view.decision is not None
        row = _pick(view.decision.options, self.rng)
        assert isinstance(row, int)
        return row


def completion_risk(view: JuniorView, unseen: Sequence[int], rows: Rows) -> float:
    """Cards the next seat can expect to collect from ``rows`` with one card (basic, advanced).

    ``unseen`` holds the cow masks of the cards this seat cannot see. For each row, the share
    of them that would complete it times the cards it would give; a greedy next seat takes
    the largest.
    """
    if not unseen:
        return 0.0
    masks = view.deck.masks
    full = view.deck.full
    risk = 0.0
    for row in rows:
        missing = full & ~row_mask(masks, row)
        share = sum(1 for m in unseen if m & missing == missing) / len(unseen)
        risk = max(risk, share * (len(row) + 1))
    return risk


def _cow_value(view: JuniorView, unseen: Sequence[int], card: int, row: int) -> float:
    """Basic and advanced: what placing ``card`` at ``row`` is worth to this seat this turn."""
    taken = view.takes(card, row)
    rows = list(view.rows)
    rows[row] = () if taken else (*rows[row], card)
    risk = completion_risk(view, unseen, tuple(rows))
    if view.fewest_wins:
        # Collecting is what hurts; a row near completion is a trap for the others.
        return -taken + 0.1 * risk
    return taken - risk


def _unseen_masks(view: JuniorView) -> list[int]:
    return [view.deck.masks[c] for c in view.unseen()]


class HeuristicBasicBot(JuniorBasicBot):
    """Complete the biggest row it can; otherwise leave the next seat the least to complete."""

    def choose_row(self, view: JuniorView) -> int:
        assert view.decision is not None and view.card is not None
        card, unseen = view.card, _unseen_masks(view)
        rows = [r for r in view.decision.options if isinstance(r, int)]
        return max(rows, key=lambda row: _cow_value(view, unseen, card, row))


class HeuristicAdvancedBot(JuniorAdvancedBot):
    """The same one-turn value over every (card, row); with nuisance scoring, avoid collecting."""

    def choose_play(self, view: JuniorView) -> tuple[int, int]:
        assert view.decision is not None
        unseen = _unseen_masks(view)
        plays = [o for o in view.decision.options if isinstance(o, tuple)]
        card, row = max(plays, key=lambda play: _cow_value(view, unseen, play[0], play[1]))
        return card, row


class HeuristicExpertsBot(JuniorExpertsBot):
    """Play the card that collects least now, keeping the cards that match many rows for later.

    A row of ``row_limit - 1`` cards is left alone when possible: whoever adds to it collects.
    With no match anywhere, the smallest row is collected (the default :meth:`choose_row`).
    """

    def choose_card(self, view: JuniorView) -> int:
        def cost(card: int) -> tuple[int, int]:
            taken = min(view.takes(card, row) for row in view.rows_for(card))
            matches = sum(1 for row in view.rows_for(card) if not view.takes(card, row))
            return taken, matches

        return min(view.hand, key=cost)
