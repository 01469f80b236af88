"""Adaptive leagues, pure: after a balanced first round, deals only where the order is still in doubt.

A league created with ``--until-confident C --max-deals N`` plays a balanced first round, then
looks at its standings after every round (:func:`workers.stats.ranking.compute`, least squares):

- an adjacent pair of the fitted order is *settled for sorting* (:func:`separated`) when its
  gap's t statistic reaches the boundary :func:`boundary`: a one-sided t test at
  ``α = LOOK_FACTOR · (1 − C) / (entrants − 1)`` with the pair's degrees of freedom
  (``LOOK_FACTOR`` calibrated by simulation so that leagues end in the exact order at least C
  of the time: see docs/ratings.md, "Adaptive leagues");
- every pair not yet settled gets ``DEALS_PER_PAIR`` new deals (at least ``ROUND_MIN_DEALS`` a
  round) at tables that seat *both* of its bots; the other seats first complete other uncertain
  pairs (neighbours in the order), then cycle through the rest of the field in an order drawn
  from the league seed;
- the league stops when every adjacent pair is settled, or when it has planned ``N`` deals in
  all (the budget: deals, i.e. blocks, first round included; each deal is played once per seat
  rotation, so at most ``N × table`` games).

"Settled" is a sorting rule, far weaker than the standings' "told apart" (Holm at the table's
confidence): :func:`rule_words` says so wherever both are shown.

Everything here is a function of the league's definition, its seed and the stored results, never
of timing or of the order results were stored in, so two runners plan the same rounds.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.tournament import Block
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed
from workers.planning.errors import PlanError
from workers.stats import ranking

KIND = "adaptive"

LOOK_FACTOR = 15.0
"""The per-pair α as a multiple of the Bonferroni share (1 − C)/(entrants − 1), calibrated by
simulation (bench/calibrate_adaptive.py on two ladders: evenly spaced, and a season's top 8, where
18 ended in the exact order only 0.93–0.95 of the time; α = 0.107 for C = 0.95 and 8 entrants, a t
of about 1.25). Far above 1 because sorting needs signs, not significance: a separated pair keeps gaining
evidence (its bots fill other pairs' tables), and a pair that looked settled but flips comes back
into the targets as a new adjacent pair."""

ALPHA_MAX = 0.25
"""The per-pair α never exceeds this (a t of about 0.7): with few bots or a low C the calibrated
share would pass any positive gap at the first look. Not calibrated: leagues of fewer than eight
bots were not simulated."""

DEALS_PER_PAIR = 1
"""New deals per still-uncertain adjacent pair and round."""

ROUND_MIN_DEALS = 4
"""A round has at least this many deals (more passes over the uncertain pairs), so that workers
have blocks to play side by side and the league is not fitted after every single deal."""

BOUNDARY = "t"
"""``t`` (the calibrated rule), ``sprt`` or ``posterior``: the alternatives measured in the
calibration (see :func:`boundary` and :func:`progress`)."""

EFFECT = 0.1
"""The SPRT's δ, the smallest gap it is built to order, in units of the spread of a game's scores
around the fit (:func:`score_noise`): calibrated by simulation."""

CHAIN_FILL = True
"""Fill a pair's table first with bots that complete other uncertain pairs (nearest in the order
first): one table of four consecutive uncertain bots informs three gaps at once."""

FIRST_ROUND_MAX = 120
"""Above this many tables, the first round is a seeded covering instead of every table."""


@dataclass(frozen=True, slots=True)
class AdaptiveRule:
    """The stopping rule of an adaptive league, as stored in ``leagues.stopping``."""

    until_confident: float
    max_deals: int

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "until_confident": self.until_confident, "max_deals": self.max_deals}

    @classmethod
    def from_json(cls, stopping: Mapping[str, Any]) -> AdaptiveRule:
        if stopping.get("kind") != KIND:
            raise PlanError(f"not an adaptive stopping rule: {dict(stopping)!r}")
        return rule(float(stopping["until_confident"]), int(stopping["max_deals"]))


def rule(until_confident: float, max_deals: int) -> AdaptiveRule:
    """A checked rule; :class:`PlanError` with a one-line reason otherwise."""
    if not 0.5 < until_confident < 1:
        raise PlanError(f"--until-confident must be between 0.5 and 1 (exclusive), got {until_confident:g}")
    if max_deals < 1:
        raise PlanError(f"--max-deals must be at least 1, got {max_deals}")
    return AdaptiveRule(until_confident, max_deals)


# --- the first round ---------------------------------------------------------------------------


def balanced_tables(entrants: int, table_size: int, seed: int) -> list[tuple[int, ...]]:
    """The first round's tables: a small balanced design where one is known, else every table.

    - 8 entrants at tables of 4: the Steiner quadruple system SQS(8), the 14 planes of the
      affine space AG(3, 2) (four positions whose bits XOR to zero): every pair of entrants sits
      together 3 times, every entrant 7 times;
    - every table of ``table_size`` out of ``entrants`` when there are at most ``FIRST_ROUND_MAX``;
    - otherwise a covering: seeded shuffles of the entrants cut into tables until every pair of
      entrants has sat together at least twice.
    """
    if not 2 <= table_size <= entrants:
        raise PlanError(
            f"a table of {table_size} needs at least {table_size} entrants, the league has {entrants}"
        )
    if (entrants, table_size) == (8, 4):
        return [t for t in itertools.combinations(range(8), 4) if t[0] ^ t[1] ^ t[2] ^ t[3] == 0]
    if math.comb(entrants, table_size) <= FIRST_ROUND_MAX:
        return list(itertools.combinations(range(entrants), table_size))
    return _covering(entrants, table_size, seed)


def _covering(entrants: int, table_size: int, seed: int) -> list[tuple[int, ...]]:
    met = dict.fromkeys(itertools.combinations(range(entrants), 2), 0)
    tables: list[tuple[int, ...]] = []
    for shuffle in itertools.count():
        order = sorted(range(entrants), key=lambda p: derive_seed(seed, "cover", shuffle, p))
        # Pad to a multiple of the table with the shuffle's first entrants (never twice at a table).
        order += order[: -entrants % table_size]
        for i in range(0, len(order), table_size):
            table = tuple(sorted(order[i : i + table_size]))
            tables.append(table)
            for pair in itertools.combinations(table, 2):
                met[pair] += 1
        if min(met.values()) >= 2:
            return tables
    raise AssertionError("unreachable")


def first_round(entrants: int, table_size: int, seed: int) -> list[Block]:
    """The first round's blocks, numbered from 0, one deal per table."""
    return [
        Block(number, table, _deal_seed(seed, number))
        for number, table in enumerate(balanced_tables(entrants, table_size, seed))
    ]


def _deal_seed(seed: int, number: int) -> int:
    return derive_seed(seed, "adaptive", "deal", number)


deal_seed = _deal_seed
"""The plan seed of block ``number`` (:mod:`workers.planning.deals`)."""


# --- the stopping boundary ---------------------------------------------------------------------


def boundary(until_confident: float, entrants: int, pair: ranking.PairGap, scale: float | None) -> float:
    """The t statistic (gap / se) an adjacent gap must reach to count as separated.

    ``sprt``: Wald's test of gap = +δ against gap = −δ on the gap's estimate, whose log likelihood
    ratio is 2δ·gap/se²; it reaches log((1 − α)/α) when gap/se ≥ log((1 − α)/α)·se/(2δ), with
    δ = ``EFFECT`` × ``scale`` (:func:`score_noise`: the spread of a game's scores around the
    fit) and α the pair's share of 1 − C. Early, with a wide se, that asks for a large t; later
    a small one will do: sorting needs the sign, not a significance test. ``t``: a one-sided t
    test at α, the same at every look.
    """
    alpha = pair_alpha(until_confident, entrants)
    if BOUNDARY == "sprt" and scale and pair.se is not None:
        return math.log((1 - alpha) / alpha) * pair.se / (2 * EFFECT * scale)
    return float(ranking.t_ppf(1 - alpha, max(pair.df, 1)))


def separated(pair: ranking.PairGap, until_confident: float, entrants: int, scale: float | None) -> bool:
    """Whether the order of this adjacent pair is settled (see the module docstring)."""
    if pair.z is None:
        return False
    return pair.gap > 0 and pair.z >= boundary(until_confident, entrants, pair, scale)


def score_noise(results: ranking.Results, standings: ranking.Standings) -> float | None:
    """The standard deviation of a game's scores around the fit (skill + the game's effect).

    The spread the luck of a game leaves once the fitted skills and the game's own level are
    taken out: the unit of the SPRT's δ (a gap is small or large against it).
    """
    if len(results.score) == 0 or not standings.rows:
        return None
    skill = np.zeros(int(max(results.position.max(), max(r.position for r in standings.rows))) + 1)
    for row in standings.rows:
        skill[row.position] = row.score
    key = results.block * 1_000_003 + results.rotation
    _, match, seats = np.unique(key, return_inverse=True, return_counts=True)

    def centred(x: np.ndarray) -> np.ndarray:
        return x - np.bincount(match, weights=x)[match] / seats[match]

    residual = centred(results.score) - centred(skill[results.position])
    dof = int(np.sum(seats - 1)) - (len(standings.rows) - 1)
    return float(np.sqrt(np.sum(residual**2) / dof)) if dof > 0 else None


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an adaptive league stands: its uncertain pairs and what is left of its budget."""

    uncertain: list[ranking.PairGap]
    """Adjacent pairs of the current order not yet separated, least certain first."""
    pairs: int
    deals_planned: int
    deals_left: int
    doubt: float
    """The summed flat-prior chance that an adjacent pair is in the wrong order (:func:`wrong_order`):
    what a ``posterior`` rule would stop on; not shown to users."""
    allowed: float
    """The doubt at which a ``posterior`` rule would stop (not the rule in force: :func:`progress`)."""

    @property
    def finished(self) -> bool:
        return not self.uncertain or self.deals_left <= 0


def progress(
    standings: ranking.Standings,
    rule_: AdaptiveRule,
    entrants: int,
    deals_planned: int,
    scale: float | None = None,
) -> Progress:
    """The league's progress, for planning and for ``league status``.

    The rule in force (``BOUNDARY = "t"``): each adjacent pair is settled on its own, by the one-
    sided t test of :func:`boundary`; the pairs it does not settle get new deals. ``posterior``,
    measured in the calibration and not in force, would instead stop once the summed chance of a
    wrong adjacent pair (``doubt``) is at most ``allowed``.
    """
    allowed = min(ALPHA_MAX, LOOK_FACTOR * (1 - rule_.until_confident))
    doubt = sum(wrong_order(p) for p in standings.pairs) + 0.5 * max(entrants - 1 - len(standings.pairs), 0)
    uncertain = [p for p in standings.pairs if not separated(p, rule_.until_confident, entrants, scale)]
    if BOUNDARY == "posterior" and doubt <= allowed:
        uncertain = []
    uncertain.sort(key=lambda p: (-math.inf if p.z is None else p.z, p.upper, p.lower))
    left = max(rule_.max_deals - deals_planned, 0)
    return Progress(uncertain, len(standings.pairs), deals_planned, left, doubt, allowed)


def pair_alpha(until_confident: float, entrants: int) -> float:
    """The one-sided level of the stopping rule's t test of each adjacent pair (see :func:`boundary`)."""
    return min(ALPHA_MAX, LOOK_FACTOR * (1 - until_confident) / max(entrants - 1, 1))


def wrong_order(pair: ranking.PairGap) -> float:
    """The chance that the pair is the other way round: P(t_df > gap/se), 0.5 with no estimate.

    With a flat prior on the gap this is its posterior probability of the other sign; looking
    after every round makes it optimistic, which ``LOOK_FACTOR`` corrects (calibrated).
    """
    if pair.z is None:
        return 0.5
    return float(ranking.t_sf(pair.z, max(pair.df, 1)))


# --- the next round ----------------------------------------------------------------------------


def plan_next(
    rule_: AdaptiveRule,
    entrants: int,
    table_size: int,
    seed: int,
    standings: ranking.Standings | None,
    planned: Sequence[Block],
    scale: float | None = None,
) -> list[Block]:
    """The next round given the standings of every planned block; ``[]`` when the league is over.

    ``scale`` is :func:`score_noise` of the results (the unit of the boundary's δ).
    """
    if not planned:
        return first_round(entrants, table_size, seed)[: rule_.max_deals]
    left = rule_.max_deals - len(planned)
    if left <= 0 or standings is None:
        return []
    state = progress(standings, rule_, entrants, len(planned), scale)
    if not state.uncertain:
        return []
    # How often each pair of entrants has sat together: where each pair's filling cycle resumes.
    together: dict[tuple[int, int], int] = {}
    for block in planned:
        for pair in itertools.combinations(sorted(block.entrants), 2):
            together[pair] = together.get(pair, 0) + 1
    number = max(b.number for b in planned) + 1
    uncertain = [tuple(sorted((p.upper, p.lower))) for p in state.uncertain]
    place = {p: i for i, p in enumerate(_order(standings))}
    new: list[Block] = []
    passes = 0
    while passes < DEALS_PER_PAIR or len(new) < ROUND_MIN_DEALS:
        passes += 1
        covered: set[tuple[int, ...]] = set()
        for a, b in uncertain:
            if (a, b) in covered:
                continue
            if len(new) >= left:
                return new
            turn = together.get((a, b), 0)
            table = _table_for(a, b, turn, entrants, table_size, seed, uncertain, covered, place)
            for key in itertools.combinations(table, 2):
                together[key] = together.get(key, 0) + 1
                covered.add(key)
            new.append(Block(number, table, _deal_seed(seed, number)))
            number += 1
    return new


def _order(standings: ranking.Standings) -> list[int]:
    """The fitted order, from the rows or, failing those, from the chain of adjacent pairs."""
    if standings.rows:
        return standings.order()
    return [standings.pairs[0].upper, *(p.lower for p in standings.pairs)] if standings.pairs else []


def _table_for(
    a: int,
    b: int,
    turn: int,
    entrants: int,
    table_size: int,
    seed: int,
    uncertain: Sequence[tuple[int, ...]] = (),
    covered: set[tuple[int, ...]] | frozenset[tuple[int, ...]] = frozenset(),
    place: Mapping[int, int] | None = None,
) -> tuple[int, ...]:
    """A table seating a and b; the other seats first complete other uncertain pairs, then the
    ``turn``-th fill of a seeded cycle through the rest of the field."""
    seated = [a, b]
    if CHAIN_FILL and place is not None:
        open_pairs = [pair for pair in uncertain if pair not in covered and pair != (a, b)]
        while len(seated) < table_size:
            gains = Counter(
                c
                for pair in open_pairs
                for c, partner in (pair, pair[::-1])
                if partner in seated and c not in seated
            )
            if not gains:
                break
            home = min(place.get(a, 0), place.get(b, 0))
            seated.append(min(gains, key=lambda c: (-gains[c], abs(place.get(c, 0) - home), c)))
    others = [p for p in range(entrants) if p not in (a, b)]
    fills = sorted(
        itertools.combinations(others, table_size - 2), key=lambda c: derive_seed(seed, "fill", a, b, *c)
    )
    for c in fills[turn % len(fills)]:
        if len(seated) < table_size and c not in seated:
            seated.append(c)
    for c in sorted(others, key=lambda c: derive_seed(seed, "fill", a, b, c)):
        if len(seated) < table_size and c not in seated:
            seated.append(c)
    return tuple(sorted(seated))


def next_blocks(
    league: Any, results: ranking.Results | Iterable[Mapping[str, Any]], blocks: Sequence[Block]
) -> list[Block]:
    """:func:`workers.planning.rounds.next_blocks` for ``{"kind": "adaptive"}`` leagues."""
    rule_ = AdaptiveRule.from_json(league.stopping)
    entrants = len(league.entrants)
    standings = scale = None
    if blocks:
        standings, scale = _fit(league, _results(results), rule_)
    return plan_next(rule_, entrants, league.table_size, league.seed, standings, blocks, scale)


def _results(results: ranking.Results | Iterable[Mapping[str, Any]]) -> ranking.Results:
    return results if isinstance(results, ranking.Results) else ranking.Results.from_rows(results)


def _fit(league: Any, data: ranking.Results, rule_: AdaptiveRule) -> tuple[ranking.Standings, float | None]:
    """The league's standings at the rule's confidence, and the game's noise around them."""
    standings = ranking.compute(
        data,
        len(league.entrants),
        higher_is_better=make_variant(league.variant, league.config).higher_is_better,
        confidence=rule_.until_confident,
    )
    return standings, score_noise(data, standings)


SETTLED_WORDS = "settled for sorting"
"""What the stopping rule says of an adjacent pair whose t reached its threshold. Never "told
apart" or "separated": that is the standings' statement (Holm at the table's confidence), a far
stricter test that most settled pairs do not pass (docs/ratings.md, "Adaptive leagues")."""


def rule_words(until_confident: float, entrants: int) -> str:
    """The stopping rule in one sentence, for ``league status``, ``league standings`` and the dashboard."""
    alpha = pair_alpha(until_confident, entrants)
    return (
        f"the league stops when every adjacent pair of the fitted order is {SETTLED_WORDS}: its gap's"
        f" one-sided t test passes at level {alpha:.3g} (calibrated so that leagues end in the exact order"
        f" about {until_confident:.0%} of the time). That is a sorting rule, not the standings' '>' /"
        f" 'told apart' (Holm at the table's confidence): a settled pair may still be '=' there"
    )


def status(
    league: Any,
    results: ranking.Results | Iterable[Mapping[str, Any]],
    deals_planned: int,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """An adaptive league's state for ``league status``: uncertain pairs and the deal budget, as JSON.

    ``told_apart``: how many adjacent pairs the standings at ``confidence`` (the stored table's)
    mark told apart, so that status and standings are read side by side in the same words.
    """
    rule_ = AdaptiveRule.from_json(league.stopping)
    entrants = len(league.entrants)
    data = _results(results)
    out: dict[str, Any] = {
        **rule_.to_json(),
        "deals_planned": deals_planned,
        "deals_left": max(rule_.max_deals - deals_planned, 0),
        "pairs": entrants - 1,
        "rule": {
            "test": "one-sided t test of each adjacent gap (a sorting rule)",
            "alpha": round(pair_alpha(rule_.until_confident, entrants), 4),
            "words": rule_words(rule_.until_confident, entrants),
        },
        "uncertain": [],
    }
    if len(data.block) == 0:
        return out | {"state": "first round", "settled": 0, "told_apart": 0, "told_apart_at": confidence}
    standings, scale = _fit(league, data, rule_)
    state = progress(standings, rule_, entrants, deals_planned, scale)
    out["settled"] = state.pairs - len(state.uncertain)
    # Holm's adjusted p-values do not depend on the confidence: the table's marks at any level.
    out["told_apart"] = sum(
        1 for p in standings.pairs if p.p_holm is not None and p.p_holm < 1 - confidence and p.gap > 0
    )
    out["told_apart_at"] = confidence
    out["uncertain"] = [
        {
            "upper": p.upper,
            "lower": p.lower,
            "z": None if p.z is None else round(p.z, 4),
            "df": p.df,
            "needed": round(boundary(rule_.until_confident, entrants, p, scale), 4),
        }
        for p in state.uncertain
    ]
    out["state"] = "settled" if not state.uncertain else "budget spent" if not state.deals_left else "running"
    return out
