"""A Monte Carlo classic bot: deal the unseen cards at random, play the hand out, keep the best card.

Each *sample* deals the cards this seat has not seen into the other seats' hands (as many
cards each as this seat holds) in a random order, which is also the order those seats play
them. Every candidate card is played out against the same samples (common random numbers)
on a small array simulation of the table, this seat continuing with a cheap greedy policy,
and the card with the fewest bull heads over the samples is played. The work per decision
is a fixed number of simulated turns, spent by successive halving: after each round the
worse half of the candidates is dropped, so the close ones get the most samples. A low
card's row is chosen the same way, the rest of its turn being known.

Where a card goes is :mod:`referee.rules.placement`'s rule, which the heuristic's risks and row
choice (used here too) call directly. The playouts keep their own form of it, for speed: the
rows as arrays sorted by last card, so that a card's row is one bisection (rules 1 and 2) and
placing it keeps the order. ``tests/test_bots_classic.py`` checks that form against
:func:`~referee.rules.placement.placement` on random rows and cards, and whole playouts against
the engine. Playing the playouts through the engine itself (:mod:`bot_sdk.search`: a
determinization, then ``apply`` turn by turn) measured 5.5 times slower per playout (174 µs
against 32 µs for a four-player hand: immutable states, events, validation), so the bot would
see a fifth of the samples in the same time; that is why it keeps its arrays.

With numpy installed (the ``sim`` extra) and without the Professional option, the playouts run
as numpy batches instead (:mod:`games.classic.sim.playouts`): each round of the halving plays
about ``samples`` games in one call, every candidate on the same deals. Measured on the same
1,000 hands against three random bots: 4.11 bull heads a hand at 320 games a round against the
pure-Python playouts' 4.35, at 0.73 times their CPU time a decision (docs/sim.md).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache
from math import comb
from typing import NamedTuple

from games.classic.bots import card_risks, cheapest_row
from games.classic.rules.classic import ClassicView
from games.classic.sdk import ClassicBot
from referee.rules.cards import bull_table

try:  # the sim extra's numpy batch playouts; the base install plays the pure-Python ones below
    from games.classic.sim import playouts as batch
except ImportError:  # pragma: no cover -- tests/sdk/test_sdk_only.py plays it without numpy
    batch = None  # type: ignore[assignment]

_NO_GAP = 1 << 30
_TAKE = 1000
"""The greedy policy's weight of a bull head against a gap of one."""
_GOLDEN = 0.6180339887498949
"""Spreads consecutive cards evenly over [0, 1) (Weyl's sequence)."""
SAMPLES = 320
"""Games per round of a batch decision's successive halving (see docs/sim.md for what it buys)."""


class MonteCarloBot(ClassicBot):
    """Monte Carlo over random deals of the unseen cards, with greedy playouts."""

    def __init__(
        self,
        budget: int = 27000,
        *,
        min_samples: int = 8,
        horizon: int = 10,
        cheapest_rows: float = 0.5,
        samples: int = SAMPLES,
        playouts: str = "auto",
    ) -> None:
        if budget < 1 or min_samples < 1 or horizon < 1 or samples < 1 or not 0.0 <= cheapest_rows <= 1.0:
            raise ValueError(
                "MonteCarloBot needs a positive budget, min_samples, samples and horizon"
                " and 0 <= cheapest_rows <= 1"
            )
        if playouts not in ("auto", "numpy", "python"):
            raise ValueError(f"MonteCarloBot's playouts are 'auto', 'numpy' or 'python', not {playouts!r}")
        if playouts == "numpy" and batch is None:
            raise ValueError("MonteCarloBot's numpy playouts need numpy: pip install 'sixnimmt-arena[sim]'")
        self.batch = playouts != "python" and batch is not None
        """Batch playouts in numpy (the sim extra), else the pure-Python ones; not with the
        Professional option, which the batch playouts do not play."""
        self.samples = samples
        """Games per round of a batch decision, shared by the candidates still in the race (all on
        the same deals); at least ``min_samples`` each."""
        self.budget = budget
        """Work per decision in units of about a card placement (see :meth:`_search`). A count,
        not a clock, so that a decision is deterministic; the default takes about 7 ms on the
        2-core machine it was tuned on, for 2 to 10 players."""
        self.min_samples = min_samples
        """Samples per round of successive halving, however small the budget."""
        self.horizon = horizon
        """Turns each playout looks ahead, the current one included."""
        self.cheapest_rows = cheapest_rows
        """The share of the other seats' low cards assumed to take the cheapest row; the rest take
        any row (a random bot's choice)."""
        self._bulls: tuple[int, ...] = ()

    def choose_card(self, view: ClassicView) -> int:
        hand = view.hand
        if len(hand) == 1:
            return hand[0]
        risks = card_risks(view)
        others = view.players - 1
        unseen = view.unseen()
        if len(unseen) < others * len(hand):
            return min(risks)[2]
        if self.batch and not view.professional:
            return self._batch_card(view, risks, unseen)
        model = self._model(view, len(unseen))
        table = _Table.of(view.rows, model.bulls)
        playout = _playout_professional if view.professional else _playout

        def value(index: int, sample: _Sample) -> int:
            rest = list(hand)
            card = rest.pop(index)
            return playout(table.copy(), card, rest, sample, model)

        order = {card: (risk, gap) for risk, gap, card in risks}
        ties = [order[card] for card in hand]
        turns = min(self.horizon, len(hand))
        return hand[self._search(len(hand), value, ties, unseen, others, turns)]

    def choose_row(self, view: ClassicView) -> int:
        hand = view.hand
        others = view.players - 1
        unseen = view.unseen()
        if not hand or len(unseen) < others * len(hand):
            return cheapest_row(view.rows, view.revealed, view.seat)
        if self.batch and not view.professional:
            return self._batch_row(view, unseen)
        model = self._model(view, len(unseen))
        playout = _playout_professional if view.professional else _playout
        card = next(c for c, seat in view.revealed if seat == view.seat)
        # The rest of the turn is known: place it once per row choice.
        later = _Sample([[c for c, _ in view.revealed if c > card]], self.rng.random())
        starts = []
        for row in range(len(view.rows)):
            table = _Table.of(view.rows, model.bulls)
            heads = table.take(row, card, model.bulls)
            playout(table, -1, [], later, model)
            starts.append((heads, table))

        def value(index: int, sample: _Sample) -> int:
            heads, table = starts[index]
            return heads + playout(table.copy(), 0, list(hand), sample, model)

        # On a tie, the row with fewer bull heads now, then the first.
        ties = [(heads, row) for row, (heads, _) in enumerate(starts)]
        turns = min(self.horizon, len(hand))
        return self._search(len(starts), value, ties, unseen, others, turns)

    # -- numpy batch playouts (games.classic.sim.playouts) --------------------------------

    def _batch_card(
        self, view: ClassicView, risks: list[tuple[float, int, int]], unseen: Sequence[int]
    ) -> int:
        """Every hand card played out on the same ``samples`` deals at once; the fewest bull heads wins."""
        hand = view.hand
        size = len(hand)
        bulls = self._bulls_for(view)
        lasts = [[row[-1] for row in view.rows]] * size
        counts = [[len(row) for row in view.rows]] * size
        heads = [[sum(bulls[c] for c in row) for row in view.rows]] * size
        rest = [hand[:i] + hand[i + 1 :] for i in range(size)]
        order = {card: (risk, gap) for risk, gap, card in risks}
        ties = [order[card] for card in hand]
        return hand[self._halving(view, unseen, lasts, counts, heads, rest, hand, ties)]

    def _batch_row(self, view: ClassicView, unseen: Sequence[int]) -> int:
        """Each row taken and the rest of the turn placed, then the hand played out on the same deals."""
        bulls = self._bulls_for(view)
        model = _Model(view.row_capacity, bulls, [[0.0]], 1.0)
        card = next(c for c, seat in view.revealed if seat == view.seat)
        later = _Sample([[c for c, _ in view.revealed if c > card]], 0.0)
        now, lasts, counts, heads = [], [], [], []
        for row in range(len(view.rows)):
            table = _Table.of(view.rows, bulls)
            now.append(table.take(row, card, bulls))
            _playout(table, -1, [], later, model)  # the turn's later cards: none of them is low
            back = sorted(range(len(table.ids)), key=table.ids.__getitem__)
            lasts.append([table.lasts[i] for i in back])
            counts.append([table.counts[i] for i in back])
            heads.append([table.heads[i] for i in back])
        k = len(view.rows)
        ties = [(heads_now, r) for r, heads_now in enumerate(now)]
        return self._halving(view, unseen, lasts, counts, heads, [view.hand] * k, (0,) * k, ties, now)

    def _halving(
        self,
        view: ClassicView,
        unseen: Sequence[int],
        lasts: Sequence[Sequence[int]],
        counts: Sequence[Sequence[int]],
        heads: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]],
        first: Sequence[int],
        ties: Sequence[tuple[float, int]],
        now: Sequence[int] | None = None,
    ) -> int:
        """The candidate with the fewest bull heads, by successive halving: each round plays about
        ``samples`` games, split evenly over the candidates still in the race (all on the same
        deals), and the better half goes on, so the close ones get the most samples."""
        alive = list(range(len(first)))
        totals = [0.0] * len(first)
        rounds = (len(alive) - 1).bit_length()
        for round_no in range(rounds):
            per = max(self.min_samples, self.samples // len(alive))
            got = self._batch_values(
                view,
                unseen,
                [lasts[i] for i in alive],
                [counts[i] for i in alive],
                [heads[i] for i in alive],
                [hands[i] for i in alive],
                [first[i] for i in alive],
                per,
            )
            for i, value in zip(alive, got, strict=True):
                totals[i] += value / per + (now[i] if now is not None else 0)
            alive.sort(key=lambda i: (totals[i], ties[i]))
            if round_no < rounds - 1:
                del alive[(len(alive) + 1) // 2 :]
        return alive[0]

    def _batch_values(
        self,
        view: ClassicView,
        unseen: Sequence[int],
        lasts: Sequence[Sequence[int]],
        counts: Sequence[Sequence[int]],
        heads: Sequence[Sequence[int]],
        hands: Sequence[Sequence[int]],
        first: Sequence[int],
        samples: int,
    ) -> list[int]:
        """The bull heads each candidate takes over ``samples`` deals (their sum), drawn from ``self.rng``."""
        assert batch is not None
        others = view.players - 1
        return batch.values(
            lasts,
            counts,
            heads,
            hands,
            first,
            unseen,
            others=others,
            turns=min(self.horizon, len(view.hand)),
            samples=samples,
            seed=self.rng.getrandbits(64),
            capacity=view.row_capacity,
            bulls=self._bulls,
            odds=_odds(others, len(unseen), view.row_capacity, view.top_card),
            cheapest=self.cheapest_rows,
        )

    def _bulls_for(self, view: ClassicView) -> tuple[int, ...]:
        if len(self._bulls) <= view.top_card:
            self._bulls = bull_table(view.top_card)
        return self._bulls

    # -- pure-Python playouts ---------------------------------------------------------------

    def _search(
        self,
        candidates: int,
        value: Callable[[int, _Sample], int],
        ties: Sequence[tuple[float, int]],
        unseen: Sequence[int],
        others: int,
        turns: int,
    ) -> int:
        """The candidate with the fewest bull heads over the samples, found by successive halving.

        Each round spends an equal share of the budget on the candidates still in the race,
        all of them on the same samples; the better half goes on to the next round.
        """
        alive = list(range(candidates))
        totals = [0] * candidates
        rounds = (candidates - 1).bit_length()
        for round_no in range(rounds):
            # Measured: a simulated turn costs about a placement per other seat plus six for the
            # policy and the bookkeeping; dealing a sample costs about two turns.
            cost = (len(alive) * turns + 2) * (others + 6)
            for _ in range(max(self.min_samples, self.budget // (rounds * cost))):
                sample = self._deal(unseen, others, turns)
                for i in alive:
                    totals[i] += value(i, sample)
            alive.sort(key=lambda i: (totals[i], ties[i]))
            if round_no < rounds - 1:
                del alive[(len(alive) + 1) // 2 :]
        return alive[0]

    def _deal(self, unseen: Sequence[int], others: int, turns: int) -> _Sample:
        """One sample: the other seats' cards of each coming turn, ascending within a turn."""
        deal = self.rng.sample(unseen, others * turns)
        plays = [deal[t * others : t * others + others] for t in range(turns)]
        for turn in plays:
            turn.sort()
        return _Sample(plays, self.rng.random())

    def _model(self, view: ClassicView, unseen: int) -> _Model:
        if len(self._bulls) <= view.top_card:
            self._bulls = bull_table(view.top_card)
        odds = take_odds(view.players - 1, unseen, view.row_capacity, view.top_card)
        return _Model(view.row_capacity, self._bulls, odds, self.cheapest_rows)


class _Sample(NamedTuple):
    """One random deal: the other seats' cards per coming turn, and a number for their row choices."""

    plays: list[list[int]]
    salt: float


class _Model(NamedTuple):
    """What the playouts of one decision share: the rules' numbers and the assumed behaviour."""

    capacity: int
    bulls: Sequence[int]
    odds: Sequence[Sequence[float]]
    """This seat's chance of filling a row, for the greedy policy (see :func:`take_odds`)."""
    cheapest: float
    """The share of the other seats' low cards that take the cheapest row (the rest: any row)."""


class _Table:
    """The rows as parallel arrays ordered by last card: last, first, length, bull heads, row index.

    Placing a card at a row's end keeps that order (the card is below the next row's end);
    only a low card moves its new row to the front.
    """

    __slots__ = ("counts", "firsts", "heads", "ids", "lasts")

    def __init__(
        self, lasts: list[int], firsts: list[int], counts: list[int], heads: list[int], ids: list[int]
    ) -> None:
        self.lasts = lasts
        self.firsts = firsts
        self.counts = counts
        self.heads = heads
        self.ids = ids

    @classmethod
    def of(cls, rows: Sequence[Sequence[int]], bulls: Sequence[int]) -> _Table:
        ids = sorted(range(len(rows)), key=lambda r: rows[r][-1])
        return cls(
            [rows[r][-1] for r in ids],
            [rows[r][0] for r in ids],
            [len(rows[r]) for r in ids],
            [sum(bulls[c] for c in rows[r]) for r in ids],
            ids,
        )

    def copy(self) -> _Table:
        return _Table(self.lasts[:], self.firsts[:], self.counts[:], self.heads[:], self.ids[:])

    def take(self, row: int, card: int, bulls: Sequence[int]) -> int:
        """A low card takes row number ``row`` (rule 4); the bull heads it took."""
        i = self.ids.index(row)
        heads = self.heads[i]
        self.restart(i, card, bulls)
        return heads

    def restart(self, i: int, card: int, bulls: Sequence[int]) -> None:
        """Row ``i`` (in last-card order) was taken; it now holds ``card`` alone."""
        lasts = self.lasts
        j = bisect_left(lasts, card, 0, i) if i and card < lasts[i - 1] else i
        if j == i:
            lasts[i] = self.firsts[i] = card
            self.counts[i] = 1
            self.heads[i] = bulls[card]
            return
        # Only a low card (or a left-end take) moves a row down the order.
        for column, value in (
            (lasts, card),
            (self.firsts, card),
            (self.counts, 1),
            (self.heads, bulls[card]),
            (self.ids, self.ids[i]),
        ):
            del column[i]
            column.insert(j, value)


def _low_row(heads: list[int], ids: list[int], card: int, mine: bool, salt: float, cheapest: float) -> int:
    """The row a low card takes (rule 4): the fewest bull heads for this seat (the first row on a
    tie, as the engine's default); for another seat that, or with chance ``1 - cheapest`` any row.

    The other seat's choice is drawn from the sample's salt and the card, without a generator.
    """
    if not mine:
        u = (card * _GOLDEN + salt) % 1.0
        if u >= cheapest:
            return int((u - cheapest) / (1.0 - cheapest) * len(heads))
    fewest = min(heads)
    i = heads.index(fewest)
    if heads.count(fewest) > 1:
        i = min((r for r, h in enumerate(heads) if h == fewest), key=ids.__getitem__)
    return i


def _playout(table: _Table, card: int, hand: list[int], sample: _Sample, model: _Model) -> int:
    """The bull heads this seat takes playing ``card`` now, then greedily, for the sample's turns.

    ``card`` 0 lets the greedy policy choose from the first turn on, -1 plays no card of
    this seat (the rest of a turn). The table is updated in place.
    """
    capacity, bulls, odds, cheapest = model
    salt = sample.salt
    lasts, counts, heads, ids = table.lasts, table.counts, table.heads, table.ids
    taken = 0
    for turn in sample.plays:
        if card == 0:
            card = _greedy(hand, lasts, counts, heads, capacity, odds)
            hand.remove(card)
        if card > 0:
            cards = [*turn, card]
            cards.sort()
        else:
            cards = turn
        for c in cards:
            i = bisect_left(lasts, c) - 1
            if i < 0:
                # Rule 4. The first cards are not kept up to date (nor needed) here.
                i = _low_row(heads, ids, c, c == card, salt, cheapest)
                if c == card:
                    taken += heads[i]
                if i:
                    del lasts[i], counts[i], heads[i]
                    lasts.insert(0, c)
                    counts.insert(0, 1)
                    heads.insert(0, bulls[c])
                    ids.insert(0, ids.pop(i))
                else:
                    lasts[0] = c
                    counts[0] = 1
                    heads[0] = bulls[c]
            elif counts[i] >= capacity:
                if c == card:
                    taken += heads[i]
                lasts[i] = c
                counts[i] = 1
                heads[i] = bulls[c]
            else:
                lasts[i] = c
                counts[i] += 1
                heads[i] += bulls[c]
        card = 0
    return taken


def _playout_professional(table: _Table, card: int, hand: list[int], sample: _Sample, model: _Model) -> int:
    """:func:`_playout` for the Professional option: a card may also go left of a row's first card."""
    capacity, bulls, odds, cheapest = model
    taken = 0
    for turn in sample.plays:
        if card == 0:
            card = _greedy(hand, table.lasts, table.counts, table.heads, capacity, odds)
            hand.remove(card)
        cards = sorted([*turn, card]) if card > 0 else turn
        for c in cards:
            lasts, firsts, counts, heads = table.lasts, table.firsts, table.counts, table.heads
            i = bisect_left(lasts, c) - 1
            gap = c - lasts[i] if i >= 0 else _NO_GAP
            left = False
            for r, first in enumerate(firsts):
                d = first - c
                if 0 < d < gap:
                    i, gap, left = r, d, True
            if i < 0:
                i = _low_row(heads, table.ids, c, c == card, sample.salt, cheapest)
            elif counts[i] < capacity:
                if left:
                    firsts[i] = c
                else:
                    lasts[i] = c
                counts[i] += 1
                heads[i] += bulls[c]
                continue
            if c == card:
                taken += heads[i]
            table.restart(i, c, bulls)
        card = 0
    return taken


@lru_cache(maxsize=1024)
def _odds(others: int, unseen: int, capacity: int, top: int) -> tuple[tuple[float, ...], ...]:
    """:func:`take_odds` as tuples, computed once per game shape and number of unseen cards."""
    return tuple(map(tuple, take_odds(others, unseen, capacity, top)))


def take_odds(others: int, unseen: int, capacity: int, top: int) -> list[list[float]]:
    """The chance that a card is the one that fills a row, by cards missing and gap: ``[need][gap]``.

    A card goes to a row with ``need`` free places (0 for a full row) and ``gap`` numbers
    between the row's end and it. It takes the row when exactly ``need`` of the other seats'
    cards land there first: each of them does with a chance of about ``gap / unseen``.
    """
    odds = [[0.0] * (top + 1) for _ in range(capacity + 1)]
    for need in range(min(capacity, others) + 1):
        ways = comb(others, need)
        row = odds[need]
        for gap in range(1, top + 1):
            q = min(1.0, gap / unseen)
            row[gap] = ways * q**need * (1.0 - q) ** (others - need)
    return odds


def _greedy(
    hand: list[int],
    lasts: list[int],
    counts: list[int],
    heads: list[int],
    capacity: int,
    odds: Sequence[Sequence[float]],
) -> int:
    """The playout policy: the card with the fewest expected bull heads now, then the tightest fit.

    Only the lowest hand card above each row's end is a candidate: it has the smallest gap
    of the cards that go to that row. A low card counts as taking the cheapest row, and
    loses a tie. ``lasts`` is ascending.
    """
    size = len(hand)
    top = len(lasts) - 1
    best_card = hand[0]
    best_score = float(min(heads) * _TAKE + _TAKE - 1 if hand[0] < lasts[0] else _NO_GAP * _TAKE)
    for j in range(top + 1):
        last = lasts[j]
        i = bisect_right(hand, last)
        if i == size:
            break
        c = hand[i]
        if j < top and c > lasts[j + 1]:
            continue
        gap = c - last
        need = capacity - counts[j]
        score = (heads[j] + need) * _TAKE * odds[need][gap] + gap
        if score < best_score:
            best_card, best_score = c, score
    return best_card
