"""The simulator's compiled core: classic turns of many games at once, in place, with numba.

One function, :func:`advance`, runs every game of a batch forward until it is over, has played
its share of hands, or waits for a decision that Python must make (a card of a seat whose
policy is a callable, a low card's row when the row policy is one). The rules are the engine's
(:mod:`games.classic.rules.classic`, placement as :mod:`referee.rules.placement`), written again
on arrays because the engine's tuples cannot be compiled; ``tests/sim`` plays the same deals and
actions through both and compares every state. The batch's arrays are described in
:class:`games.classic.sim.batch.Batch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

DEAL, PLAY, ROW, OVER, PLACING = 0, 1, 2, 3, 4
"""Phases: the engine's four, and PLACING (a turn's cards being placed, inside :func:`advance` only)."""
CHEAPEST, RANDOM, EXTERNAL = 0, 1, 2
"""Row policies: the fewest bull heads (the first such row, as the engine's default action), a
uniformly random row, or a row Python chooses (``row_in``)."""
NO_ERROR, BAD_CARD, BAD_ROW = 0, 1, 2

_F = TypeVar("_F", bound=Callable[..., Any])


def _jit(function: _F) -> _F:
    # cache=True: compiled once per machine into __pycache__ (a few seconds), then loaded.
    return cast(_F, numba.njit(cache=True, nogil=True)(function))


@_jit
def _next(state: np.uint64) -> tuple[np.uint64, np.uint64]:
    """xorshift64*: the next state and 32 random bits (numba's own generator cost a third of a hand)."""
    state ^= state >> np.uint64(12)
    state ^= state << np.uint64(25)
    state ^= state >> np.uint64(27)
    return state, (state * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(32)


@_jit
def _below(bits: np.uint64, n: int) -> int:
    """A number in 0 … n-1 from 32 random bits (multiply and shift: bias below n / 2**32)."""
    # np.int64, not int(): numba would type int() of a uint64 as uint64, and float when mixed.
    return np.int64((bits * np.uint64(n)) >> np.uint64(32))  # type: ignore[return-value]


@_jit
def advance(
    cfg: np.ndarray,
    bulls: np.ndarray,
    deck: np.ndarray,
    rows: np.ndarray,
    lens: np.ndarray,
    heads: np.ndarray,
    hands: np.ndarray,
    held: np.ndarray,
    scores: np.ndarray,
    piles: np.ndarray,
    pile_lens: np.ndarray,
    phase: np.ndarray,
    hand_no: np.ndarray,
    turn: np.ndarray,
    revealed: np.ndarray,
    placed: np.ndarray,
    hands_left: np.ndarray,
    seat_random: np.ndarray,
    cards_in: np.ndarray,
    card_ready: np.ndarray,
    row_mode: int,
    row_in: np.ndarray,
    row_ready: np.ndarray,
    deals: np.ndarray,
    deals_used: np.ndarray,
    error: np.ndarray,
    seed: int,
) -> None:
    """Run every game forward in place; see the module docstring.

    ``cfg`` is (players, rows, row capacity, hand size, target or 0, hands or 0, professional).
    A game stops at a new hand once ``hands_left`` is 0 (negative: no limit); a bad card or row
    from Python sets its ``error`` (and stops it) instead of raising.
    """
    state = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
    players, nrows, capacity, hand_size = cfg[0], cfg[1], cfg[2], cfg[3]
    target, max_hands, professional = cfg[4], cfg[5], cfg[6] != 0
    size = deck.shape[0]
    deal_size = players * hand_size + nrows
    cards = np.empty(size, np.int64)
    far = 1 << 40
    for b in range(rows.shape[0]):
        if error[b] != NO_ERROR:
            continue
        while True:
            ph = phase[b]
            if ph == OVER:
                break
            if ph == DEAL:
                if hands_left[b] == 0:
                    break
                used = deals_used[b]
                if used < deals.shape[1]:
                    for i in range(deal_size):
                        cards[i] = deals[b, used, i]
                    deals_used[b] = used + 1
                else:
                    # A partial Fisher-Yates shuffle: the rows' cards first, then the hands'.
                    for i in range(size):
                        cards[i] = deck[i]
                    for i in range(deal_size):
                        state, u = _next(state)
                        j = i + _below(u, size - i)
                        cards[i], cards[j] = cards[j], cards[i]
                for r in range(nrows):
                    rows[b, r, 0] = cards[r]
                    lens[b, r] = 1
                    heads[b, r] = bulls[cards[r]]
                for s in range(players):
                    start = nrows + s * hand_size
                    for i in range(hand_size):  # insertion sort: ascending, as the engine holds them
                        c = cards[start + i]
                        j = i
                        while j > 0 and hands[b, s, j - 1] > c:
                            hands[b, s, j] = hands[b, s, j - 1]
                            j -= 1
                        hands[b, s, j] = c
                    pile_lens[b, s] = 0
                held[b] = hand_size
                turn[b] = 0
                hand_no[b] += 1
                placed[b] = 0
                phase[b] = PLAY
                continue
            if ph == PLAY:
                if not card_ready[b]:
                    waits = False
                    for s in range(players):
                        if not seat_random[s]:
                            waits = True
                    if waits:
                        break
                h = held[b]
                for s in range(players):  # Python's cards first, so that a bad one changes nothing
                    if not seat_random[s]:
                        i = 0
                        while i < h and hands[b, s, i] != cards_in[b, s]:
                            i += 1
                        if i == h:
                            error[b] = BAD_CARD
                if error[b] != NO_ERROR:
                    break
                for s in range(players):
                    if seat_random[s]:
                        state, u = _next(state)
                        i = _below(u, h)
                    else:
                        i = 0
                        while hands[b, s, i] != cards_in[b, s]:
                            i += 1
                    c = hands[b, s, i]
                    for k in range(i, h - 1):
                        hands[b, s, k] = hands[b, s, k + 1]
                    hands[b, s, h - 1] = 0
                    j = s  # insertion into the turn's (card, seat) pairs, ascending by card
                    while j > 0 and revealed[b, j - 1, 0] > c:
                        revealed[b, j, 0] = revealed[b, j - 1, 0]
                        revealed[b, j, 1] = revealed[b, j - 1, 1]
                        j -= 1
                    revealed[b, j, 0] = c
                    revealed[b, j, 1] = s
                card_ready[b] = False
                held[b] = h - 1
                placed[b] = 0
                phase[b] = PLACING
                continue
            # ROW or PLACING: place the turn's cards from `placed` on, lowest first.
            waiting = False
            i = placed[b]
            while i < players:
                c = revealed[b, i, 0]
                s = revealed[b, i, 1]
                best = -1
                highest = 0
                for r in range(nrows):
                    last = rows[b, r, lens[b, r] - 1]
                    if highest < last < c:
                        highest = last
                        best = r
                left = False
                if professional:
                    gap = c - highest if best >= 0 else far
                    for r in range(nrows):
                        d = rows[b, r, 0] - c
                        if 0 < d < gap:
                            best = r
                            gap = d
                            left = True
                take = -1
                if best < 0:  # rule 4: the card's owner chooses a row to take
                    if row_mode == EXTERNAL:
                        if not row_ready[b]:
                            phase[b] = ROW
                            placed[b] = i
                            waiting = True
                            break
                        take = row_in[b]
                        row_ready[b] = False
                        if take < 0 or take >= nrows:
                            error[b] = BAD_ROW
                            placed[b] = i
                            waiting = True
                            break
                    elif row_mode == RANDOM:
                        state, u = _next(state)
                        take = _below(u, nrows)
                    else:
                        take = 0
                        for r in range(1, nrows):
                            if heads[b, r] < heads[b, take]:
                                take = r
                    phase[b] = PLACING
                elif lens[b, best] >= capacity:  # rule 3
                    take = best
                if take >= 0:
                    n = lens[b, take]
                    m = pile_lens[b, s]
                    for k in range(n):
                        piles[b, s, m + k] = rows[b, take, k]
                    pile_lens[b, s] = m + n
                    scores[b, s] += heads[b, take]
                    rows[b, take, 0] = c
                    lens[b, take] = 1
                    heads[b, take] = bulls[c]
                elif left:
                    n = lens[b, best]
                    for k in range(n, 0, -1):
                        rows[b, best, k] = rows[b, best, k - 1]
                    rows[b, best, 0] = c
                    lens[b, best] = n + 1
                    heads[b, best] += bulls[c]
                else:
                    rows[b, best, lens[b, best]] = c
                    lens[b, best] += 1
                    heads[b, best] += bulls[c]
                i += 1
            if waiting:
                break
            placed[b] = 0
            turn[b] += 1
            if turn[b] < hand_size:
                phase[b] = PLAY
                continue
            if hands_left[b] > 0:
                hands_left[b] -= 1
            top = 0
            for s in range(players):
                top = max(top, scores[b, s])
            if (target > 0 and top >= target) or (max_hands > 0 and hand_no[b] >= max_hands):
                phase[b] = OVER
            else:
                phase[b] = DEAL
