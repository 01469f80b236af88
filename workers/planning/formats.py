"""The ``sampled`` league format, pure: equal tables per bot, pairs meeting as evenly as possible.

A sampled league of ``n`` bots at tables of ``k`` plays ``b = n · r / k`` tables, every bot at
exactly ``r`` of them (``--tables-per-bot R``, or ``--tables B``), each table as ``deals``
duplicate blocks. Where pairs can meet equally often it is a balanced incomplete block design
(BIBD): every pair of bots shares exactly ``λ = r (k − 1) / (n − 1)`` tables. Known designs, each
relabelled by a permutation drawn from the league seed (a relabelled BIBD is a BIBD, and the
union of BIBDs on the same bots is one):

- projective planes PG(2, p), p prime: ``n = p² + p + 1``, ``k = p + 1``, λ = 1 ((7, 3, 1), (13, 4, 1), …);
- affine planes AG(2, p), p prime: ``n = p²``, ``k = p``, λ = 1 ((9, 3, 1), (25, 5, 1), …);
- the planes of AG(m, 2): ``n = 2^m``, ``k = 4``, the Steiner quadruple systems SQS(8), SQS(16), …;
- cyclic difference families and Paley difference sets ((13, 3, 1), (37, 4, 1), (11, 5, 2), …);
- every table of ``k`` out of ``n``, when there are few enough of them.

``r`` a multiple of a design's ``r₀`` takes ``r / r₀`` relabelled copies. Otherwise the copies
that fit are completed by a greedy design (or the whole league is one): tables are filled one
seat at a time from the bots with the most tables still to play (so every bot ends with exactly
``r``), choosing the one that has met the table's seated bots least, ties broken by the seed;
then a local search swaps bots between tables (which keeps every bot's count) to bring every
pair's count into ``[⌊λ⌋, ⌈λ⌉]``, i.e. pair counts within 1 of each other. Nothing of size
C(n, k) is ever built: the work is O(b · k · n) with numpy, memory an n × n count matrix.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.tournament import Block
from referee.rules.seeding import derive_seed
from workers.planning.errors import PlanError

MAX_TABLES = 200_000
"""A sampled league plans at most this many tables (each is ``deals`` blocks)."""

COMPLETE_MAX = 20_000
"""Every table of k out of n counts as a known design while there are at most this many."""

SEARCH_STEPS = 20
"""The local search tries at most this many moves per table of the design."""

SEARCH_PATIENCE = 400
"""… and stops after this many moves in a row that leave as many pairs out of balance: where no
design has every pair within 1 (8 bots at tables of 4, 2 tables each, say), it cannot get there."""

SEARCH_MAX_STEPS = 3_000
"""… and never more than this many in all (a few seconds at worst)."""

SEARCH_SAMPLE = 16
"""Tables tried as the other side of a swap, per move."""

DIFFERENCE_FAMILIES: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {
    (13, 3): ((0, 1, 4), (0, 2, 7)),
    (19, 3): ((0, 1, 4), (0, 2, 9), (0, 5, 11)),
    (25, 3): ((0, 1, 3), (0, 4, 11), (0, 5, 13), (0, 6, 15)),
    (37, 4): ((0, 1, 3, 24), (0, 4, 26, 32), (0, 10, 18, 30)),
    (21, 5): ((0, 1, 4, 14, 16),),
    (41, 5): ((0, 1, 4, 11, 29), (0, 2, 8, 17, 22)),
}
"""Base tables of cyclic designs on Z_n: their translates mod n form a BIBD (checked by the tests)."""


@dataclass(frozen=True, slots=True)
class Design:
    """The tables of a sampled league and how they were made."""

    tables: tuple[tuple[int, ...], ...]
    kind: str
    """``PG(2,3)``, ``AG(3,2) planes``, ``cyclic``, ``complete``, ``greedy``, or ``… + greedy``."""


def tables_per_bot(entrants: int, table_size: int, per_bot: int | None, tables: int | None) -> int:
    """The ``r`` of ``--tables-per-bot`` or ``--tables``, checked; :class:`PlanError` otherwise."""
    if not 2 <= table_size <= entrants:
        raise PlanError(
            f"a table of {table_size} needs at least {table_size} entrants, the league has {entrants}"
        )
    if (per_bot is None) == (tables is None):
        raise PlanError("a sampled league needs one of --tables-per-bot R or --tables B")
    if tables is not None:
        if tables < 1 or (tables * table_size) % entrants:
            raise PlanError(
                f"--tables {tables}: {entrants} bots at tables of {table_size} play the same number of"
                f" tables only when the tables are a multiple of {entrants // math.gcd(entrants, table_size)}"
            )
        per_bot = tables * table_size // entrants
    assert per_bot is not None
    step = table_size // math.gcd(entrants, table_size)
    if per_bot < 1 or per_bot % step:
        raise PlanError(
            f"--tables-per-bot {per_bot}: {entrants} bots at tables of {table_size} need a multiple of"
            f" {step} tables per bot (n × r divisible by k)"
        )
    if entrants * per_bot // table_size > MAX_TABLES:
        raise PlanError(
            f"{entrants * per_bot // table_size} tables: a sampled league plans at most {MAX_TABLES}"
        )
    return per_bot


def plan_sampled(entrants: int, table_size: int, per_bot: int, deals: int, seed: int) -> list[Block]:
    """The blocks of a sampled league, numbered from 0: each table of :func:`design`, ``deals`` times."""
    if deals < 1:
        raise PlanError(f"deals must be at least 1, got {deals}")
    tables = design(entrants, table_size, per_bot, seed).tables
    return [
        Block(t * deals + d, table, derive_seed(seed, "sampled", t, "deal", d))
        for t, table in enumerate(tables)
        for d in range(deals)
    ]


# --- known designs ------------------------------------------------------------------------------


def _prime(p: int) -> bool:
    return p >= 2 and all(p % d for d in range(2, math.isqrt(p) + 1))


def _projective_plane(p: int) -> list[tuple[int, ...]]:
    """The lines of PG(2, p): points and lines are the normalised nonzero vectors of GF(p)³."""
    points = [
        v
        for v in itertools.product(range(p), repeat=3)
        if any(v) and v[next(i for i in range(3) if v[i])] == 1
    ]
    index = {v: i for i, v in enumerate(points)}
    return [
        tuple(sorted(index[q] for q in points if sum(a * b for a, b in zip(line, q, strict=True)) % p == 0))
        for line in points
    ]


def _affine_plane(p: int) -> list[tuple[int, ...]]:
    """The lines of AG(2, p): y = a·x + c, and x = c."""
    lines = [tuple(sorted(x * p + (a * x + c) % p for x in range(p))) for a in range(p) for c in range(p)]
    return lines + [tuple(c * p + y for y in range(p)) for c in range(p)]


def _binary_planes(n: int) -> list[tuple[int, ...]]:
    """The planes of AG(m, 2), n = 2^m: four points whose bits XOR to zero (an SQS(n))."""
    return [(a, b, c, a ^ b ^ c) for a, b, c in itertools.combinations(range(n), 3) if (a ^ b ^ c) > c]


def _cyclic(n: int, base: Iterable[Sequence[int]]) -> list[tuple[int, ...]]:
    return [tuple(sorted((x + shift) % n for x in table)) for table in base for shift in range(n)]


def _paley(p: int) -> list[tuple[int, ...]]:
    """The quadratic residues mod a prime p ≡ 3 (mod 4) and their translates: a (p, (p−1)/2, (p−3)/4) BIBD."""
    residues = sorted({x * x % p for x in range(1, p)})
    return _cyclic(p, [residues])


def known_designs(n: int, k: int) -> list[tuple[str, list[tuple[int, ...]]]]:
    """Every known BIBD on n points with blocks of k (see the module docstring), smallest first."""
    found: list[tuple[str, list[tuple[int, ...]]]] = []
    q = k - 1
    if k >= 3 and _prime(q) and n == q * q + q + 1:
        found.append((f"PG(2,{q})", _projective_plane(q)))
    if k >= 3 and _prime(k) and n == k * k:
        found.append((f"AG(2,{k})", _affine_plane(k)))
    if k == 4 and n >= 8 and n & (n - 1) == 0 and n <= 128:
        found.append((f"AG({n.bit_length() - 1},2) planes", _binary_planes(n)))
    if (n, k) in DIFFERENCE_FAMILIES:
        found.append((f"cyclic ({n},{k})", _cyclic(n, DIFFERENCE_FAMILIES[n, k])))
    if _prime(n) and n % 4 == 3 and k == (n - 1) // 2 and k >= 3:
        found.append((f"Paley ({n},{k})", _paley(n)))
    if k == n or math.comb(n, k) <= COMPLETE_MAX:
        found.append(("complete", list(itertools.combinations(range(n), k))))
    return sorted(found, key=lambda d: len(d[1]))


def design_kind(n: int, k: int, per_bot: int) -> str:
    """What :func:`design` builds for these sizes (without building it)."""
    return _pick(n, k, per_bot, [(name, len(tables) * k // n) for name, tables in known_designs(n, k)])[0]


def _pick(n: int, k: int, per_bot: int, sizes: Sequence[tuple[str, int]]) -> tuple[str, str | None, int]:
    """(kind, the design copied, copies): a design whose r₀ divides r, else the largest that fits."""
    dividing = [(name, r0) for name, r0 in sizes if per_bot % r0 == 0]
    if dividing:
        name, r0 = min(dividing, key=lambda d: d[1])
        return (name if per_bot == r0 else f"{name} ×{per_bot // r0}"), name, per_bot // r0
    fitting = [(name, r0) for name, r0 in sizes if r0 <= per_bot]
    if fitting:
        name, r0 = max(fitting, key=lambda d: d[1])
        copies = per_bot // r0
        return f"{name} ×{copies} + greedy" if copies > 1 else f"{name} + greedy", name, copies
    return "greedy", None, 0


# --- the design ---------------------------------------------------------------------------------


def design(n: int, k: int, per_bot: int, seed: int) -> Design:
    """The tables of a sampled league: every bot at ``per_bot`` of them, pairs as even as can be."""
    tables_per_bot(n, k, per_bot, None)
    known = known_designs(n, k)
    kind, name, copies = _pick(n, k, per_bot, [(d, len(t) * k // n) for d, t in known])
    rng = np.random.default_rng(derive_seed(seed, "sampled", n, k, per_bot))
    met = np.zeros((n, n), dtype=np.int32)
    tables: list[list[int]] = []
    if name is not None:
        base = dict(known)[name]
        for _ in range(copies):
            label = rng.permutation(n)
            for table in base:
                tables.append([int(label[x]) for x in table])
        for drawn in tables:
            _meet(met, drawn, 1)
        rest = per_bot - copies * (len(base) * k // n)
    else:
        rest = per_bot
    if rest:
        start = len(tables)
        tables += _greedy(n, k, rest, met, rng)
        if n > k:
            _improve(n, k, per_bot, tables, met, rng, start)
    return Design(tuple(tuple(sorted(t)) for t in tables), kind)


def _meet(met: np.ndarray, table: Sequence[int], step: int) -> None:
    index = np.asarray(table)
    met[np.ix_(index, index)] += step
    met[index, index] -= step


def _greedy(n: int, k: int, per_bot: int, met: np.ndarray, rng: np.random.Generator) -> list[list[int]]:
    """``n · per_bot / k`` tables: each seat from the bots with most tables left, least met first."""
    left = np.full(n, per_bot, dtype=np.int64)
    tables = []
    big = float(n * k * (per_bot + int(met.max()) + 1) + 1)
    for _ in range(n * per_bot // k):
        noise = rng.random(n)
        seated: list[int] = []
        cost = np.zeros(n, dtype=np.float64)
        for _seat in range(k):
            # Most tables left first (so every bot ends with exactly per_bot), then least met.
            score = (left.max() - left) * big + cost + noise
            score[left == 0] = np.inf
            if seated:
                score[seated] = np.inf
            pick = int(np.argmin(score))
            seated.append(pick)
            left[pick] -= 1
            cost += met[pick]
        _meet(met, seated, 1)
        tables.append(seated)
    return tables


def _improve(
    n: int,
    k: int,
    per_bot: int,
    tables: list[list[int]],
    met: np.ndarray,
    rng: np.random.Generator,
    start: int,
) -> None:
    """Swap bots between tables (every bot keeps its count) until each pair meets ⌊λ⌋ or ⌈λ⌉ times.

    Only tables from ``start`` on (the greedy part) change; a known design's copies stay whole.
    """
    mean = per_bot * (k - 1) / (n - 1)
    low, high = math.floor(mean), math.ceil(mean)
    where: list[set[int]] = [set() for _ in range(n)]
    for t in range(start, len(tables)):
        for bot in tables[t]:
            where[bot].add(t)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    bad = {(int(a), int(b)) for a, b in np.argwhere(upper & ((met > high) | (met < low)))}
    movable = len(tables) - start
    steps = min(SEARCH_STEPS * movable, SEARCH_MAX_STEPS)
    fewest, since = len(bad), 0
    pairs: list[tuple[int, int]] = []

    def penalty(count: int) -> float:
        return (count - mean) ** 2

    def delta(t1: int, x: int, t2: int, y: int) -> float:
        change: dict[tuple[int, int], int] = {}
        for a in tables[t1]:
            if a != x:
                change[min(a, x), max(a, x)] = change.get((min(a, x), max(a, x)), 0) - 1
                change[min(a, y), max(a, y)] = change.get((min(a, y), max(a, y)), 0) + 1
        for b in tables[t2]:
            if b != y:
                change[min(b, y), max(b, y)] = change.get((min(b, y), max(b, y)), 0) - 1
                change[min(b, x), max(b, x)] = change.get((min(b, x), max(b, x)), 0) + 1
        return sum(penalty(int(met[p]) + d) - penalty(int(met[p])) for p, d in change.items() if d)

    def swap(t1: int, x: int, t2: int, y: int) -> None:
        _meet(met, tables[t1], -1)
        _meet(met, tables[t2], -1)
        tables[t1][tables[t1].index(x)] = y
        tables[t2][tables[t2].index(y)] = x
        _meet(met, tables[t1], 1)
        _meet(met, tables[t2], 1)
        where[x].discard(t1)
        where[x].add(t2)
        where[y].discard(t2)
        where[y].add(t1)
        touched = {x, y}
        for a in touched:
            for b in (*tables[t1], *tables[t2]):
                if a != b:
                    pair = (min(a, b), max(a, b))
                    if low <= met[pair] <= high:
                        bad.discard(pair)
                    else:
                        bad.add(pair)

    for _ in range(steps):
        if not bad or since > SEARCH_PATIENCE:
            return
        if len(bad) < fewest:
            fewest, since = len(bad), 0
        else:
            since += 1
        if not pairs:
            pairs = sorted(bad)
            rng.shuffle(pairs)
        a, b = pairs.pop()
        if (a, b) not in bad:
            continue
        best: tuple[float, int, int, int, int] | None = None
        if met[a, b] > high:
            shared = sorted(where[a] & where[b])
            if not shared:
                bad.discard((a, b))
                continue
            t1 = shared[int(rng.integers(len(shared)))]
            x = (a, b)[int(rng.integers(2))]
            for t2 in rng.choice(
                np.arange(start, len(tables)), size=min(SEARCH_SAMPLE, movable), replace=False
            ):
                t2 = int(t2)
                if x in tables[t2]:
                    continue
                for y in tables[t2]:
                    if y not in tables[t1]:
                        d = delta(t1, x, t2, y)
                        if best is None or d < best[0]:
                            best = (d, t1, x, t2, y)
        else:
            own = sorted(where[a] - where[b])
            others = sorted(where[b] - where[a])
            if not own or not others:
                bad.discard((a, b))
                continue
            t1 = own[int(rng.integers(len(own)))]
            for t2 in rng.choice(np.array(others), size=min(SEARCH_SAMPLE, len(others)), replace=False):
                t2 = int(t2)
                for x in tables[t1]:
                    if x != a and x not in tables[t2]:
                        d = delta(t1, x, t2, b)
                        if best is None or d < best[0]:
                            best = (d, t1, x, t2, b)
        if best is not None and (best[0] < 0 or (best[0] == 0 and rng.random() < 0.3)):
            swap(*best[1:])


# --- how balanced it is -------------------------------------------------------------------------


def balance(n: int, tables: Iterable[Sequence[int]]) -> dict[str, Any]:
    """Tables per bot and pair meetings (min, max over every pair, never-met ones included)."""
    met = np.zeros((n, n), dtype=np.int32)
    count = np.zeros(n, dtype=np.int64)
    total = 0
    for table in tables:
        index = np.asarray(table)
        met[np.ix_(index, index)] += 1
        count[index] += 1
        total += 1
    pairs = met[np.triu_indices(n, 1)]
    return {
        "tables": total,
        "tables_per_bot": {"min": int(count.min()), "max": int(count.max())},
        "pair_meetings": {
            "min": int(pairs.min()) if len(pairs) else 0,
            "max": int(pairs.max()) if len(pairs) else 0,
            "mean": round(float(pairs.mean()), 4) if len(pairs) else 0.0,
        },
        "balanced": bool(len(pairs) and pairs.min() == pairs.max() and count.min() == count.max()),
    }


def status(n: int, k: int, deals: int, blocks: Sequence[Sequence[int]]) -> dict[str, Any]:
    """A sampled league's design for ``league status``: its kind and how balanced it is."""
    tables = list(blocks)[::deals] if deals > 0 else list(blocks)
    out = balance(n, tables)
    per_bot = out["tables_per_bot"]["max"]
    out["kind"] = design_kind(n, k, per_bot) if per_bot and n * per_bot % k == 0 else "?"
    out["deals_per_table"] = deals
    return out
