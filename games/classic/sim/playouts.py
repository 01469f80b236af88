"""Monte Carlo playouts of classic in numpy batches: what the Monte Carlo bot runs.

numpy only, nothing compiled: a sandboxed bot process pays ``import numpy`` (about 0.1 s,
measured in the sandbox) and no numba import (0.4 s) or compile (seconds) per process, see
docs/sim.md. One call plays every candidate of a decision against the same sampled deals at
once (common random numbers): ``K`` candidates × ``S`` samples games, each array op covering
them all, so the cost of a decision is a few hundred numpy operations whatever ``S``.

A game here is the rest of a hand from one seat's view: the rows, this seat's hand, and the
other seats' cards for each coming turn, dealt at random from the unseen cards (the order in
which they come is the order they are played: random play). This seat plays its candidate card
first (or none), then a greedy policy (the card with the fewest expected bull heads now, then
the tightest fit); another seat's low card takes the cheapest row with chance ``cheapest``,
else any row. Without the Professional option only (the bot's pure-Python playouts do both).
``tests/test_bots_classic.py`` checks every take against the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

try:  # the playouts in C (games/classic/sim/_native.c), built with the project where a compiler is
    from games.classic.sim import _native
except ImportError:  # pragma: no cover -- an install without a C compiler: the numpy batch below
    _native = None  # type: ignore[assignment]

Array = npt.NDArray[Any]
NATIVE = _native is not None
"""Whether :func:`playouts` runs in C (the extension module is built), not on the numpy batch."""
TAKE = 1000
"""The greedy policy's weight of a bull head against a gap of one."""
NONE = 1 << 20
"""A card slot that holds no card (above every card, so a sorted hand keeps its cards first)."""
_GOLDEN = 0.6180339887498949


def values(
    lasts: Sequence[Sequence[int]],
    counts: Sequence[Sequence[int]],
    heads: Sequence[Sequence[int]],
    hands: Sequence[Sequence[int]],
    first: Sequence[int],
    unseen: Sequence[int],
    *,
    others: int,
    turns: int,
    samples: int,
    seed: int,
    capacity: int,
    bulls: tuple[int, ...],
    odds: tuple[tuple[float, ...], ...],
    cheapest: float,
) -> list[int]:
    """The bull heads each of ``K`` candidates takes over ``samples`` deals (their sum), from plain
    lists: :func:`playouts` on deals drawn from ``seed``. ``hands[k]`` holds the candidate's cards
    after its ``first`` (all of one length); ``odds`` is the greedy policy's table (the bot's
    ``take_odds``, as tuples so that its array is made once)."""
    rng = np.random.default_rng(seed)
    plays = deal(np.array(unseen, np.int64), others, turns, samples, rng)
    size = max(len(hand) for hand in hands)
    held = np.full((len(hands), max(size, 1)), NONE, np.int64)
    for k, hand in enumerate(hands):
        held[k, : len(hand)] = hand
    taken, _ = playouts(
        np.array(lasts, np.int64),
        np.array(counts, np.int64),
        np.array(heads, np.int64),
        held,
        np.array(first, np.int64),
        plays,
        rng.random(samples),
        capacity=capacity,
        bulls=_array(bulls),
        odds=_odds(odds),
        cheapest=cheapest,
    )
    result: list[int] = taken.sum(axis=1).tolist()
    return result


@lru_cache(maxsize=8)
def _array(bulls: tuple[int, ...]) -> Array:
    return np.array(bulls, np.int64)


@lru_cache(maxsize=1024)
def _odds(odds: tuple[tuple[float, ...], ...]) -> Array:
    return np.array(odds)


def deal(unseen: Array, others: int, turns: int, samples: int, rng: np.random.Generator) -> Array:
    """``[samples, turns, others]``: the other seats' cards of each coming turn, ascending in a turn."""
    keys = rng.random((samples, unseen.size))
    picked = unseen[np.argsort(keys, axis=1)[:, : others * turns]]
    plays: Array = np.sort(picked.reshape(samples, turns, others), axis=2)
    return plays


def _playouts_c(
    lasts: Array,
    counts: Array,
    heads: Array,
    hands: Array,
    first: Array,
    plays: Array,
    salt: Array,
    *,
    capacity: int,
    bulls: Array,
    odds: Array,
    cheapest: float,
) -> tuple[Array, Array]:
    """:func:`playouts_numpy`'s games played in C, game by game (``games.classic.sim._native``)."""
    k, r = lasts.shape
    s, t, o = plays.shape
    taken = np.empty((k, s), np.int64)
    chosen = np.empty((k, s, t), np.int64)
    _native.playouts(
        _c(lasts), _c(counts), _c(heads), _c(hands), _c(first), _c(plays), _c(salt, np.float64),
        _c(bulls), _c(odds, np.float64), taken, chosen,
        k, r, hands.shape[1], s, t, o, capacity, odds.shape[1] - 1, float(cheapest),
    )  # fmt: skip
    return taken, chosen


def _c(array: Array, dtype: type = np.int64) -> Array:
    """``array`` as the C playouts read it: C-contiguous, of ``dtype`` (no copy when it already is)."""
    return np.ascontiguousarray(array, dtype)


def playouts_numpy(
    lasts: Array,
    counts: Array,
    heads: Array,
    hands: Array,
    first: Array,
    plays: Array,
    salt: Array,
    *,
    capacity: int,
    bulls: Array,
    odds: Array,
    cheapest: float,
) -> tuple[Array, Array]:
    """The bull heads this seat takes in ``K`` candidates × ``S`` samples: ``([K, S], [K, S, T])``,
    in numpy batches: every array op covers every game (the reference for the C playouts).

    ``lasts``, ``counts``, ``heads``: ``[K, R]``, each candidate's rows (last card, cards, bull
    heads) in the table's order. ``hands``: ``[K, H]`` this seat's cards after the candidate, ascending,
    :data:`NONE` for none. ``first``: ``[K]``, the card played in the first turn, 0 to let the
    greedy policy choose it too. ``plays``: :func:`deal`'s ``[S, T, O]``; ``salt``: ``[S]`` numbers
    in [0, 1) for the other seats' row choices. The second array holds this seat's card in each
    turn (for the tests).
    """
    k, r = lasts.shape
    s, t, o = plays.shape
    g = k * s
    idx = np.arange(g)
    lasts = np.repeat(lasts, s, axis=0)
    counts = np.repeat(counts, s, axis=0)
    heads = np.repeat(heads, s, axis=0)
    hands = np.repeat(hands, s, axis=0)
    mine = np.repeat(first, s).astype(np.int64)
    salt_g = np.tile(salt, k)
    others = np.tile(plays, (k, 1, 1))
    given = bool(first.all())
    if not given and first.any():
        raise ValueError("the first cards are all given or all 0 (the greedy policy's)")
    base = idx * r
    flat_lasts, flat_counts, flat_heads = lasts.reshape(-1), counts.reshape(-1), heads.reshape(-1)
    taken = np.zeros(g, np.int64)
    chosen = np.zeros((g, t), np.int64)
    top = odds.shape[1] - 1
    for turn in range(t):
        if turn or not given:
            pick = _greedy(hands, lasts, counts, heads, capacity, odds, top)
            mine = hands[idx, pick]
            hands[idx, pick] = NONE
            hands.sort(axis=1)
        chosen[:, turn] = mine
        cards = np.concatenate([mine[:, None], others[:, turn, :]], axis=1)
        cards.sort(axis=1)
        is_mine = cards == mine[:, None]
        for j in range(o + 1):
            c = cards[:, j]
            below = lasts < c[:, None]
            row = np.where(below, lasts, -1).argmax(axis=1)
            if j == 0:
                # Rule 4: only the turn's lowest card can be below every row. It takes a row as
                # a sixth card does (to its owner's pile, the card starting the row anew).
                low = ~below.any(axis=1)
                if low.any():
                    row = np.where(low, _low_row(c, is_mine[:, 0], salt_g, heads, cheapest), row)
            at = base + row
            n = flat_counts[at]
            h = flat_heads[at]
            full = n >= capacity
            if j == 0:
                full |= low
            taken += h * (full & is_mine[:, j])
            flat_lasts[at] = c
            flat_counts[at] = np.where(full, 1, n + 1)
            flat_heads[at] = np.where(full, 0, h) + bulls[c]
    return taken.reshape(k, s), chosen.reshape(k, s, t)


playouts = _playouts_c if NATIVE else playouts_numpy
"""The bull heads this seat takes in ``K`` candidates × ``S`` samples: ``([K, S], [K, S, T])``,
as :func:`playouts_numpy` documents: in C where the extension module ``games.classic.sim._native``
is built (:data:`NATIVE`), else by :func:`playouts_numpy`. Both give the same bull heads and cards
for the same inputs (tests/test_bots_classic.py)."""


def _low_row(card: Array, mine: Array, salt: Array, heads: Array, cheapest: float) -> Array:
    """The row each game's low card would take: the fewest bull heads (the first such row, the
    engine's default) for this seat; for another, that with chance ``cheapest``, else any row,
    drawn from the sample's salt and the card."""
    row: Array = heads.argmin(axis=1)
    if cheapest < 1.0:
        count = heads.shape[1]
        u = (card * _GOLDEN + salt) % 1.0
        anyrow = np.minimum(((u - cheapest) / (1.0 - cheapest) * count).astype(np.int64), count - 1)
        row = np.where(~mine & (u >= cheapest), anyrow, row)
    return row


def _greedy(
    hands: Array, lasts: Array, counts: Array, heads: Array, capacity: int, odds: Array, top: int
) -> Array:
    """The greedy policy's card in every game, as an index into ``hands``.

    Of the cards that go to a row, only the lowest one is a candidate (the tightest fit there),
    scored by the chance it is the one that fills the row times what it would take, plus its
    gap; a low card counts as taking the cheapest row. The first best card wins a tie.
    """
    g, size = hands.shape
    valid: Array = hands < NONE
    below = lasts[:, None, :] < hands[:, :, None]
    under = np.where(below, lasts[:, None, :], -1)
    row = under.argmax(axis=2)
    end = np.take_along_axis(under, row[:, :, None], axis=2)[:, :, 0]
    low: Array = end < 0
    gap = np.minimum(hands - end, top)
    rows = np.arange(g)[:, None]
    need = capacity - counts[rows, row]
    raw = (heads[rows, row] + need) * TAKE * odds[need, np.maximum(gap, 0)] + gap
    first: Array = np.ones((g, size), np.bool_)
    first[:, 1:] = (row[:, 1:] != row[:, :-1]) | low[:, :-1]
    score: Array = np.where(valid & ~low & first, raw, np.inf)
    low_score = heads.min(axis=1) * TAKE + TAKE - 1
    score[:, 0] = np.where(low[:, 0] & valid[:, 0], low_score, score[:, 0])
    pick: Array = score.argmin(axis=1)
    return pick
