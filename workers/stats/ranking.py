"""League standings from a batch fit of every stored result, with intervals that hold at any size.

The order of a league comes from one fit of all its results, so the same results give the same
table whatever order they were played or stored in:

- ``ls`` (the default): least squares ``score = skill(entrant) + effect(match)``, one effect per
  played match (deal and seat rotation). The effect soaks up what every seat of a game shares
  (a long game, a costly deal), so a skill difference is the expected score difference of two
  entrants at the same table, unbiased whoever else sits there; a skill is reported on the
  score scale (the entrants' skills average to the league's mean score per game).
- ``pl``: a batch Plackett–Luce fit of the finishing orders (``choix``), ties handled the way
  Breslow handles them in survival models (each tied seat beats the seats below it).

Intervals are jackknife-over-blocks t intervals: the fit is repeated with each block left out
(a block is one deal played in every seat rotation, the unit the league samples), and the
spread of those fits gives standard errors for every entrant and every difference; the t
distribution with (blocks − 1) degrees of freedom keeps them honest with few blocks. Below two
blocks no interval is given (``None``: too few blocks). Adjacent entrants whose difference is
not significant after Holm's correction are marked as not told apart; rank intervals come from
all pairwise tests with Holm's correction. An entrant without games has no rank (``None``).

The plain mean's interval is given only for a complete design (every table of the entrants that
played, equally often): elsewhere a bot's plain mean depends on whom it happened to sit with, and
no interval around it covers what it would score against the whole field. Intervals of a variant
whose scores cannot fall below ``lowest`` (bull heads: 0) are clipped there. See docs/ratings.md.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

METHODS = ("ls", "pl")
MIN_BLOCKS = 2
"""Fewer blocks than this give no interval: one block says nothing about its own spread."""

PL_GROUPS = 20
"""The Plackett–Luce fit is iterative, so its jackknife leaves out groups of blocks, not single ones."""


def t_ppf(q: Any, df: Any) -> Any:
    """Student's t quantile (``scipy.stats.t.ppf``, the same function: ``scipy.special.stdtrit``).

    From ``scipy.special``, imported on first use: ``scipy.stats`` costs about a second to import,
    which every ``league`` command and local pool process paid without ranking anything.
    """
    from scipy import special

    return special.stdtrit(df, q)


def t_sf(x: Any, df: Any) -> Any:
    """Student's t survival function (``scipy.stats.t.sf``: ``scipy.special.stdtr`` of ``-x``)."""
    from scipy import special

    return special.stdtr(df, -np.asarray(x, dtype=float))


BATCHED_CELLS = 4_000_000
"""Up to this many cells (blocks × entrants²) the jackknife's leave-one-out systems are built and
solved as one batch; above it each left-out block is a low-rank update of the whole fit."""


class RankingError(ValueError):
    """Standings that cannot be computed: an unknown method, a confidence outside (0, 1)."""


class Results(NamedTuple):
    """A league's seat results as arrays: one entry per seat of every played match."""

    block: np.ndarray
    rotation: np.ndarray
    position: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    faults: np.ndarray

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> Results:
        """From :func:`workers.store.repo.league_results` rows (any order)."""
        rows = list(rows)
        return cls(
            np.array([r["block"] for r in rows], dtype=np.int64),
            np.array([r["rotation"] for r in rows], dtype=np.int64),
            np.array([r["position"] for r in rows], dtype=np.int64),
            np.array([r["score"] for r in rows], dtype=np.float64),
            np.array([r["rank"] for r in rows], dtype=np.int64),
            np.array([r.get("faults", 0) for r in rows], dtype=np.int64),
        )

    def canonical(self) -> Results:
        """The same results sorted by (block, rotation, position): the fit's input order."""
        order = np.lexsort((self.position, self.rotation, self.block))
        return Results(*(a[order] for a in self))


@dataclass(frozen=True, slots=True)
class EntrantStanding:
    """One entrant's line of the table."""

    position: int
    score: float
    """The fitted score: the sort key (``ls``: on the score scale; ``pl``: log strength)."""
    score_low: float | None
    score_high: float | None
    mean_score: float
    """The plain mean score per game."""
    ci_low: float | None
    ci_high: float | None
    """The plain mean's interval: only in a complete design (``Standings.design``)."""
    rank: int | None
    """The place in the table; ``None`` for an entrant without games (it has no rank)."""
    rank_low: int | None
    rank_high: int | None
    games: int
    blocks: int
    faults: int


@dataclass(frozen=True, slots=True)
class PairGap:
    """The difference between two entrants adjacent in the order, the upper one first."""

    upper: int
    lower: int
    gap: float
    """How much better the upper entrant is, in the fit's units (≥ 0)."""
    low: float | None
    high: float | None
    se: float | None
    df: int
    z: float | None
    """gap / se, a t statistic with ``df`` degrees of freedom."""
    p_value: float | None
    p_holm: float | None
    distinct: bool
    """Told apart: the Holm-adjusted p-value is below 1 − confidence."""


@dataclass(frozen=True, slots=True)
class Standings:
    """A league table: entrants best first, and the gaps between neighbours."""

    method: str
    higher_is_better: bool
    confidence: float
    rows: list[EntrantStanding]
    pairs: list[PairGap]
    blocks: int
    note: str = ""
    separated: tuple[tuple[bool, ...], ...] = ()
    """``separated[a][b]``: the fit tells a and b apart (every pair tested, Holm-corrected)."""
    design: str = "complete"
    """``none``: no results yet; ``complete``: every table of the entrants that played, each as
    often (a finished round-robin); ``incomplete``: anything else (sampled, gauntlet, adaptive, a round-robin
    under way). In an incomplete design the score is a bot's skill over the tables it played (6
    nimmt! is not additive: against other company it may score otherwise), and the plain mean
    has no interval (``ci_low``/``ci_high`` are ``None``): it depends on the company."""

    def order(self) -> list[int]:
        """Entrant positions, best first."""
        return [r.position for r in self.rows]


def compute(
    results: Results | Iterable[Mapping[str, Any]],
    entrants: int,
    *,
    higher_is_better: bool,
    method: str = "ls",
    confidence: float = 0.95,
    lowest: float | None = None,
) -> Standings:
    """The standings of ``entrants`` positions from their seat results (see the module docstring).

    ``lowest``: the lowest score the variant can give (bull heads: 0), when it has one; intervals
    of quantities that cannot fall below it are clipped there.
    """
    if method not in METHODS:
        raise RankingError(f"unknown ranking method {method!r} (known: {', '.join(METHODS)})")
    if not 0 < confidence < 1:
        raise RankingError(f"confidence must be between 0 and 1, got {confidence}")
    data = (results if isinstance(results, Results) else Results.from_rows(results)).canonical()
    if len(data.block) == 0:
        return _no_results(method, higher_is_better, confidence, entrants)
    played = np.bincount(data.position, minlength=entrants)[:entrants]
    numbers, block_index = np.unique(data.block, return_inverse=True)
    n_blocks = len(numbers)
    membership = np.zeros((n_blocks, entrants), dtype=bool)
    membership[block_index, data.position] = True
    blocks_of = membership.sum(axis=0)

    if method == "ls":
        estimate, replicates = _ls_fit(data, block_index, n_blocks, entrants)
        sign = 1.0 if higher_is_better else -1.0
    else:
        estimate, replicates = _pl_fit(data, block_index, n_blocks, entrants)
        sign = 1.0
    note = ""
    if replicates is not None and _articulation(membership):
        replicates, note = None, "one block holds the design together: no intervals until more are played"

    design = "complete" if _complete(membership) else "incomplete"
    mean_score, ci = _block_means(data, block_index, n_blocks, entrants, confidence)
    if design != "complete":
        ci = [(None, None)] * entrants
    faults = np.bincount(data.position, weights=data.faults, minlength=entrants)[:entrants]

    # Best first; entrants that have not played go last, in position order.
    key = [(0 if played[p] else 1, -sign * estimate[p] if played[p] else 0.0, p) for p in range(entrants)]
    order = [p for *_, p in sorted(key)]
    alpha = 1 - confidence
    cov = _replicate_cov(replicates, n_blocks if method == "ls" else min(n_blocks, PL_GROUPS))

    shared = membership.T.astype(np.float64) @ membership.astype(np.float64)  # blocks two entrants share

    def contrasts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The standard errors of estimate[a] − estimate[b] (NaN: no interval) and their degrees
        of freedom (the blocks either entrant played, less one), for arrays of pairs."""
        df = (blocks_of[a] + blocks_of[b] - np.rint(shared[a, b]).astype(np.int64)) - 1
        if method == "pl":
            df = np.minimum(df, PL_GROUPS - 1)
        se = np.full(len(a), np.nan)
        if cov is not None:
            ok = (np.minimum(blocks_of[a], blocks_of[b]) >= MIN_BLOCKS) & (df >= 1)
            se[ok] = np.sqrt(np.maximum(cov[a[ok], a[ok]] + cov[b[ok], b[ok]] - 2 * cov[a[ok], b[ok]], 0.0))
        return se, np.maximum(df, 0)

    def contrast(a: int, b: int) -> tuple[float | None, int]:
        se, df = contrasts(np.array([a]), np.array([b]))
        return (None if math.isnan(se[0]) else float(se[0])), int(df[0])

    pairs = []
    for upper, lower in itertools.pairwise(order):
        if not (played[upper] and played[lower]):
            continue
        gap = sign * (estimate[upper] - estimate[lower])
        se, df = contrast(upper, lower)
        pairs.append(_pair(upper, lower, gap, se, df, confidence))
    pairs = _holm_pairs(pairs, alpha)

    rank_low, rank_high, separated = _rank_intervals(order, played, estimate, sign, contrasts, alpha)
    rows = []
    floor = lowest if method == "ls" else None
    for place, p in enumerate(order, 1):
        se_p = math.sqrt(cov[p, p]) if cov is not None and blocks_of[p] >= MIN_BLOCKS else None
        half = None
        if se_p is not None:
            df_p = int(blocks_of[p]) - 1 if method == "ls" else min(int(blocks_of[p]), PL_GROUPS) - 1
            half = float(t_ppf(1 - alpha / 2, df_p)) * se_p
        ranked = bool(played[p])
        at = float(estimate[p])
        rows.append(
            EntrantStanding(
                position=p,
                score=float(estimate[p]),
                score_low=None if half is None else _clip(at - half, floor, at),
                score_high=None if half is None else at + half,
                mean_score=float(mean_score[p]),
                ci_low=None if ci[p][0] is None else _clip(ci[p][0], lowest, float(mean_score[p])),
                ci_high=ci[p][1],
                rank=place if ranked else None,
                rank_low=rank_low[p] if ranked else None,
                rank_high=rank_high[p] if ranked else None,
                games=int(played[p]),
                blocks=int(blocks_of[p]),
                faults=int(faults[p]),
            )
        )
    return Standings(method, higher_is_better, confidence, rows, pairs, n_blocks, note, separated, design)


def _no_results(method: str, higher_is_better: bool, confidence: float, entrants: int) -> Standings:
    """The table of a league without results: every entrant unranked, nothing estimated."""
    rows = [
        EntrantStanding(p, 0.0, None, None, 0.0, None, None, None, None, None, 0, 0, 0)
        for p in range(entrants)
    ]
    return Standings(method, higher_is_better, confidence, rows, [], 0, "no results yet", (), "none")


def _clip(low: float, lowest: float | None, estimate: float) -> float:
    """An interval's lower end, raised to the lowest possible score when there is one.

    The true value cannot lie below ``lowest``, so cutting the interval there keeps every true
    value it covered. Not above the estimate itself: a fitted score may lie below ``lowest``
    (it extrapolates from differences at the same table), and then its interval is left as is.
    """
    if lowest is None or estimate < lowest:
        return low
    return max(low, lowest)


def _complete(membership: np.ndarray) -> bool:
    """Whether the blocks seat every table of the entrants that played, each equally often.

    The design in which a bot's plain mean is its mean against the whole field, whatever the
    game's non-additive effects of company (a finished round-robin).
    """
    played = membership.any(axis=0)
    size = membership.sum(axis=1)
    if len(size) == 0 or (size != size[0]).any():
        return False
    k, m = int(size[0]), int(played.sum())
    tables = Counter(tuple(np.nonzero(row)[0]) for row in membership)
    if len(tables) != math.comb(m, k):
        return False
    return len(set(tables.values())) == 1


# --- least squares with match effects ---------------------------------------------------------


def _ls_fit(
    data: Results, block_index: np.ndarray, n_blocks: int, entrants: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Skills on the score scale, and one refit per left-out block (``None`` below two blocks).

    Absorbing the match effects leaves the normal equations ``L s = r`` with, per match of k
    seats, ``L += I − J/k`` on its entrants and ``r += x − mean(x)``; each block's share of L
    and r is kept apart, so leaving a block out is a subtraction.
    """
    n = entrants
    match_key = data.block * 1_000_003 + data.rotation
    _, match_index, seats = np.unique(match_key, return_inverse=True, return_counts=True)
    k = seats[match_index].astype(np.float64)
    centred = data.score - np.bincount(match_index, weights=data.score)[match_index] / k
    # Seat pairs within each match (a seat with itself included): weight 1/k off L's diagonal.
    starts = np.concatenate(([0], np.cumsum(seats)))
    first = starts[match_index]
    offsets = np.arange(len(match_index)) - first
    pair_a, pair_b = [], []
    for size in np.unique(seats):
        rows = np.nonzero(seats[match_index] == size)[0]
        heads = rows[offsets[rows] == 0]
        grid = heads[:, None] + np.arange(size)[None, :]
        pair_a.append(np.repeat(grid, size, axis=1).ravel())
        pair_b.append(np.tile(grid, (1, size)).ravel())
    a = np.concatenate(pair_a)
    b = np.concatenate(pair_b)
    weight = 1.0 / k[a]
    pa, pb = data.position[a], data.position[b]
    blk = block_index[a]

    total_l = np.zeros((n, n))
    np.add.at(total_l, (pa, pb), -weight)
    np.add.at(total_l, (data.position, data.position), 1.0)
    total_r = np.bincount(data.position, weights=centred, minlength=n)[:n]
    played = np.bincount(data.position, minlength=n)[:n] > 0
    grand = float(data.score.mean()) if len(data.score) else 0.0
    estimate = _solve(total_l, total_r, played) + grand
    if n_blocks < MIN_BLOCKS:
        return estimate, None

    block_r = np.zeros((n_blocks, n))
    np.add.at(block_r, (block_index, data.position), centred)
    replicates = np.empty((n_blocks, n))
    grand_sum, grand_count = float(data.score.sum()), len(data.score)
    block_sum = np.bincount(block_index, weights=data.score, minlength=n_blocks)
    block_count = np.bincount(block_index, minlength=n_blocks)
    if n_blocks * n * n <= BATCHED_CELLS:
        block_l = np.zeros((n_blocks, n, n))
        np.add.at(block_l, (blk, pa, pb), -weight)
        np.add.at(block_l, (block_index, data.position, data.position), 1.0)
        block_seats = np.zeros((n_blocks, n))
        np.add.at(block_seats, (block_index, data.position), 1.0)
        rest_played = (np.bincount(data.position, minlength=n)[:n][None, :] - block_seats) > 0
        # Leaving out most blocks leaves every entrant playing: one batched solve for those.
        whole = np.nonzero((rest_played == played[None, :]).all(axis=1))[0]
        idx = np.nonzero(played)[0]
        done = np.zeros(n_blocks, dtype=bool)
        if len(whole) and len(idx):
            mats = (total_l[None, :, :] - block_l[whole])[:, idx][:, :, idx] + 1.0 / len(idx)
            rhs = (total_r[None, :] - block_r[whole])[:, idx]
            try:
                solved = np.linalg.solve(mats, rhs[..., None])[..., 0]
            except np.linalg.LinAlgError:  # a split design: the one-by-one path copes
                pass
            else:
                replicates[whole] = 0.0
                replicates[np.ix_(whole, idx)] = solved
                done[whole] = True
        for i in np.nonzero(~done)[0]:
            replicates[i] = _solve(total_l - block_l[i], total_r - block_r[i], rest_played[i])
    else:  # large leagues: each left-out block is a low-rank change of the whole design
        _leave_out_large(
            total_l, total_r, played, data, block_index, block_r, blk, pa, pb, weight, replicates
        )
    rest_grand = (grand_sum - block_sum) / np.maximum(grand_count - block_count, 1)
    return estimate, replicates + rest_grand[:, None]


def _leave_out_large(
    total_l: np.ndarray,
    total_r: np.ndarray,
    played: np.ndarray,
    data: Results,
    block_index: np.ndarray,
    block_r: np.ndarray,
    blk: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    weight: np.ndarray,
    replicates: np.ndarray,
) -> None:
    """Fill ``replicates[i]`` with the fit that leaves block ``i`` out, for many entrants.

    With ``M = L + J/m`` over the m entrants that played (the sum-to-zero system :func:`_solve`
    solves), leaving out block i subtracts its share ``P C Pᵀ``, where P picks the block's q ≤ k
    entrants and C is q × q. Woodbury's identity then gives the refit from M⁻¹ (one inverse for
    the whole league) in O(m·q²) a block instead of an O(m³) solve:
    ``(M − P C Pᵀ)⁻¹ = M⁻¹ + M⁻¹P (I − C G)⁻¹ C Pᵀ M⁻¹`` with ``G = Pᵀ M⁻¹ P``. A block whose
    absence leaves an entrant without games, or whose update is ill-conditioned, is refitted
    directly.
    """
    n = len(total_r)
    n_blocks = len(replicates)
    counts = np.bincount(data.position, minlength=n)[:n]
    idx = np.nonzero(played)[0]
    local = np.full(n, -1, dtype=np.int64)
    local[idx] = np.arange(len(idx))
    inverse = None
    if len(idx):
        try:
            inverse = np.linalg.inv(total_l[np.ix_(idx, idx)] + 1.0 / len(idx))
        except np.linalg.LinAlgError:  # a split design: every block refitted directly
            inverse = None
    whole = inverse @ total_r[idx] if inverse is not None else None
    order = np.argsort(blk, kind="stable")
    bounds = np.searchsorted(blk[order], np.arange(n_blocks + 1))
    seat_order = np.argsort(block_index, kind="stable")
    seat_bounds = np.searchsorted(block_index[seat_order], np.arange(n_blocks + 1))
    for i in range(n_blocks):
        sel = order[bounds[i] : bounds[i + 1]]
        own = data.position[seat_order[seat_bounds[i] : seat_bounds[i + 1]]]
        members = np.unique(own)
        own_counts = np.bincount(own, minlength=n)[:n]
        rest_played = (counts - own_counts) > 0
        if inverse is not None and whole is not None and bool((rest_played == played).all()):
            q = len(members)
            share = np.zeros((q, q))
            at = (np.searchsorted(members, pa[sel]), np.searchsorted(members, pb[sel]))
            np.add.at(share, at, -weight[sel])
            share[np.diag_indices(q)] += own_counts[members]
            cols = local[members]
            m_p = inverse[:, cols]
            y = whole - m_p @ block_r[i, members]
            inner = np.eye(q) - share @ inverse[np.ix_(cols, cols)]
            if np.linalg.cond(inner) < 1e8:
                replicates[i] = 0.0
                replicates[i, idx] = y + m_p @ np.linalg.solve(inner, share @ y[cols])
                continue
        full = np.zeros((n, n))
        np.add.at(full, (pa[sel], pb[sel]), -weight[sel])
        np.add.at(full, (own, own), 1.0)
        replicates[i] = _solve(total_l - full, total_r - block_r[i], rest_played)


def _solve(laplacian: np.ndarray, rhs: np.ndarray, played: np.ndarray) -> np.ndarray:
    """The skills that sum to zero over the entrants that played (the others: 0)."""
    idx = np.nonzero(played)[0]
    out = np.zeros(len(rhs))
    if len(idx) == 0:
        return out
    sub = laplacian[np.ix_(idx, idx)] + 1.0 / len(idx)
    out[idx] = np.linalg.lstsq(sub, rhs[idx], rcond=None)[0]
    return out


# --- Plackett–Luce ---------------------------------------------------------------------------


def _top1(data: Results, rows: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """Finishing orders as choices: each seat beats the seats ranked below it (Breslow's ties)."""
    choices: list[tuple[int, tuple[int, ...]]] = []
    match_key = data.block[rows] * 1_000_003 + data.rotation[rows]
    boundaries = np.nonzero(np.diff(match_key))[0] + 1
    for match in np.split(rows, boundaries):
        ranks = data.rank[match]
        for seat in match:
            below = tuple(int(p) for p in data.position[match][ranks > data.rank[seat]])
            if below:
                choices.append((int(data.position[seat]), below))
    return choices


def _pl_strengths(
    entrants: int, choices: Sequence[tuple[int, tuple[int, ...]]], played: np.ndarray
) -> np.ndarray:
    import choix  # only the Plackett-Luce method needs it: not imported with the ranking

    out = np.zeros(entrants)
    if not choices:
        return out
    # A little regularisation keeps an entrant that never lost (or never won) finite.
    params = choix.ilsr_top1(entrants, choices, alpha=0.01)
    params = params - params[played].mean()
    out[played] = params[played]
    return out


def _pl_fit(
    data: Results, block_index: np.ndarray, n_blocks: int, entrants: int
) -> tuple[np.ndarray, np.ndarray | None]:
    played = np.bincount(data.position, minlength=entrants)[:entrants] > 0
    everything = np.arange(len(data.block))
    estimate = _pl_strengths(entrants, _top1(data, everything), played)
    if n_blocks < MIN_BLOCKS:
        return estimate, None
    groups = min(n_blocks, PL_GROUPS)
    group_of = block_index % groups
    replicates = np.empty((groups, entrants))
    for g in range(groups):
        rest = np.nonzero(group_of != g)[0]
        rest_played = np.bincount(data.position[rest], minlength=entrants)[:entrants] > 0
        replicates[g] = _pl_strengths(entrants, _top1(data, rest), rest_played)
    return estimate, replicates


# --- intervals and tests ---------------------------------------------------------------------


def _replicate_cov(replicates: np.ndarray | None, groups: int) -> np.ndarray | None:
    """The jackknife covariance of the estimates: (G − 1)/G · Σ (θ₋g − θ̄)(θ₋g − θ̄)ᵀ."""
    if replicates is None or groups < MIN_BLOCKS:
        return None
    dev = replicates - replicates.mean(axis=0)
    return np.asarray((groups - 1) / groups * dev.T @ dev)


def _block_means(
    data: Results, block_index: np.ndarray, n_blocks: int, entrants: int, confidence: float
) -> tuple[np.ndarray, list[tuple[float | None, float | None]]]:
    """Each entrant's mean score per game and the t interval over its block means."""
    sums = np.zeros((n_blocks, entrants))
    counts = np.zeros((n_blocks, entrants))
    np.add.at(sums, (block_index, data.position), data.score)
    np.add.at(counts, (block_index, data.position), 1.0)
    means = np.zeros(entrants)
    intervals: list[tuple[float | None, float | None]] = []
    for p in range(entrants):
        present = counts[:, p] > 0
        values = sums[present, p] / counts[present, p]
        means[p] = float(values.mean()) if len(values) else 0.0
        if len(values) < MIN_BLOCKS:
            intervals.append((None, None))
            continue
        half = (
            float(t_ppf(0.5 + confidence / 2, len(values) - 1)) * values.std(ddof=1) / math.sqrt(len(values))
        )
        intervals.append((means[p] - half, means[p] + half))
    return means, intervals


def _pair(upper: int, lower: int, gap: float, se: float | None, df: int, confidence: float) -> PairGap:
    if se is None:
        return PairGap(upper, lower, float(gap), None, None, None, df, None, None, None, False)
    if se == 0.0:
        # Every replicate agrees exactly: as certain as the data can make it.
        z = math.inf if gap > 0 else 0.0
        p = 0.0 if gap > 0 else 1.0
        return PairGap(upper, lower, float(gap), float(gap), float(gap), 0.0, df, z, p, None, False)
    z = gap / se
    p = float(2 * t_sf(abs(z), df))
    half = float(t_ppf(0.5 + confidence / 2, df)) * se
    return PairGap(upper, lower, float(gap), gap - half, gap + half, se, df, z, p, None, False)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (m - step) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _holm_pairs(pairs: list[PairGap], alpha: float) -> list[PairGap]:
    tested = [i for i, p in enumerate(pairs) if p.p_value is not None]
    adjusted = holm([pairs[i].p_value or 0.0 for i in tested])
    out = list(pairs)
    for i, p_holm in zip(tested, adjusted, strict=True):
        pair = pairs[i]
        out[i] = PairGap(
            pair.upper, pair.lower, pair.gap, pair.low, pair.high, pair.se, pair.df, pair.z,
            pair.p_value, p_holm, p_holm < alpha and pair.gap > 0,
        )  # fmt: skip
    return out


def _rank_intervals(
    order: list[int],
    played: np.ndarray,
    estimate: np.ndarray,
    sign: float,
    contrasts: Any,
    alpha: float,
) -> tuple[dict[int, int], dict[int, int], tuple[tuple[bool, ...], ...]]:
    """Each entrant's possible places: those not excluded by a Holm-corrected test of every pair.

    Also which pairs those tests tell apart.
    """
    active = np.array([p for p in order if played[p]], dtype=np.int64)
    first, second = np.triu_indices(len(active), 1)  # every pair, in the order's row-major order
    a, b = active[first], active[second]
    se, df = contrasts(a, b)
    diff = sign * (estimate[a] - estimate[b])
    tested = ~np.isnan(se)
    a, b, se, df, diff = a[tested], b[tested], se[tested], df[tested], diff[tested]
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = t_sf(np.abs(diff / np.where(se == 0.0, 1.0, se)), df)
    p_values = np.where(se == 0.0, np.where(diff != 0, 0.0, 1.0), 2 * tail)
    better, worse = np.where(diff >= 0, a, b), np.where(diff >= 0, b, a)
    told = np.array(holm(p_values.tolist()), dtype=np.float64) < alpha
    n = len(order)
    above_counts = np.bincount(worse[told], minlength=n)
    below_counts = np.bincount(better[told], minlength=n)
    grid = np.zeros((n, n), dtype=bool)
    grid[better[told], worse[told]] = True
    grid[worse[told], better[told]] = True
    separated = grid.tolist()
    above = {q: int(above_counts[q]) for q in order}
    below = {q: int(below_counts[q]) for q in order}
    low = {p: 1 + above[p] for p in order}
    high = {p: (len(active) - below[p] if played[p] else len(order)) for p in order}
    for p in order:
        if not played[p]:
            low[p] = len(active) + 1
    return low, high, tuple(tuple(row) for row in separated)


def _articulation(membership: np.ndarray) -> bool:
    """Whether leaving out some single block splits the entrants that still play into parts.

    Then that block's jackknife refit compares parts that no longer meet, and no interval is
    honest. Quick when every two entrants of several blocks share two blocks; otherwise
    Tarjan's articulation points on the bipartite graph of blocks and entrants.
    """
    n_blocks, entrants = membership.shape
    degree = membership.sum(axis=0)
    multi = degree >= MIN_BLOCKS
    if n_blocks < MIN_BLOCKS or multi.sum() < 2:
        return False
    shared = membership[:, multi].T.astype(np.int64) @ membership[:, multi].astype(np.int64)
    np.fill_diagonal(shared, MIN_BLOCKS)
    if shared.min() >= MIN_BLOCKS:
        return False
    # Vertices: blocks 0..B-1, entrants B..B+n-1.
    adjacency: list[list[int]] = [[] for _ in range(n_blocks + entrants)]
    for blk, pos in zip(*np.nonzero(membership), strict=True):
        adjacency[int(blk)].append(n_blocks + int(pos))
        adjacency[n_blocks + int(pos)].append(int(blk))
    start = n_blocks + int(np.argmax(degree))  # an entrant of several blocks: it plays whatever goes
    disc = [-1] * len(adjacency)
    low = [0] * len(adjacency)
    disc[start] = 0
    clock = 1
    stack: list[tuple[int, int, int]] = [(start, -1, 0)]
    while stack:
        v, parent, i = stack[-1]
        if i < len(adjacency[v]):
            stack[-1] = (v, parent, i + 1)
            w = adjacency[v][i]
            if disc[w] == -1:
                disc[w] = low[w] = clock
                clock += 1
                stack.append((w, v, 0))
            elif w != parent:
                low[v] = min(low[v], disc[w])
            continue
        stack.pop()
        if parent == -1:
            continue
        low[parent] = min(low[parent], low[v])
        # A block cut off from a child that goes on playing (an entrant with another block, or
        # a whole subtree) splits the design; an entrant whose only block it was just stops.
        if parent < n_blocks and low[v] >= disc[parent] and not (v >= n_blocks and degree[v - n_blocks] == 1):
            return True
    # Entrants never reached play in a part of their own from the start.
    return any(disc[n_blocks + p] == -1 for p in np.nonzero(degree)[0])


def scope(standings: Standings) -> str:
    """What the scores are measured over, in words (for the CLI, JSON and the dashboard)."""
    if standings.design == "none":
        return "no results yet"
    if standings.design == "complete":
        return "every table of the field, equally often: scores and plain means hold against the whole field"
    return (
        "the tables played (not every table of the field): 6 nimmt! is not additive, so a score is"
        " the bot's skill against the company it met; the plain mean depends on that company and"
        " has no interval"
    )


def to_json(standings: Standings, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The standings as plain JSON-ready values (``names`` by position, when given)."""

    def r(x: float | None) -> float | None:
        return None if x is None else (x if math.isinf(x) else round(x, 4))

    def name(p: int) -> Any:
        return names[p] if names is not None else p

    return {
        "method": standings.method,
        "higher_is_better": standings.higher_is_better,
        "confidence": standings.confidence,
        "blocks": standings.blocks,
        "note": standings.note,
        "design": standings.design,
        "scope": scope(standings),
        "standings": [
            {
                "bot": name(row.position),
                "position": row.position,
                "rank": row.rank,
                "rank_low": row.rank_low,
                "rank_high": row.rank_high,
                "score": r(row.score) if row.games else None,
                "score_low": r(row.score_low),
                "score_high": r(row.score_high),
                "mean_score": r(row.mean_score) if row.games else None,
                "ci_low": r(row.ci_low),
                "ci_high": r(row.ci_high),
                "games": row.games,
                "blocks": row.blocks,
                "faults": row.faults,
            }
            for row in standings.rows
        ],
        "pairs": [
            {
                "upper": name(pair.upper),
                "lower": name(pair.lower),
                "gap": r(pair.gap),
                "low": r(pair.low),
                "high": r(pair.high),
                "se": r(pair.se),
                "df": pair.df,
                "z": r(pair.z),
                "p_value": r(pair.p_value),
                "p_holm": r(pair.p_holm),
                "distinct": pair.distinct,
            }
            for pair in standings.pairs
        ],
    }
