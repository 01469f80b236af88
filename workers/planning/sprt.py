"""SPRT of a new bot version against an old one, pure: the statistics and the plan of deals.

A test is a league whose ``stopping`` JSON has ``kind: "sprt"``. Each *deal* is one seeded deal
played twice as duplicate blocks: NEW with the field, and OLD with the same field, on the same
seed, every seat rotation. The deal's paired difference is NEW's mean score per game minus OLD's,
signed so that positive means NEW is better (for classic, where fewer bull heads are better,
it is OLD's mean minus NEW's).

On those differences runs a generalized sequential probability ratio test (GSPRT) of
H0: δ = 0 against H1: δ = margin, with the normal approximation and the variance estimated from
the data, as Fishtest does for chess (``LLR_alt2`` in fishtest/stats/LLRcalc.py)::

    LLR = n (δ1 − δ0) (2 mean − δ0 − δ1) / (2 var)

where ``mean`` and ``var`` are the mean and the (maximum-likelihood, divide-by-n) variance of the
n differences. The test stops when the LLR leaves [log(β/(1−α)), log((1−β)/α)], looking once
per batch of deals and not before ``min_deals``, or when ``max_deals`` deals are spent.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from arena.tournament import Block
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed
from workers.planning import PlanError

KIND = "sprt"
FORMAT = "sprt"
DEFAULT_MARGIN = 2.0
"""H1's improvement in bull heads per game: meant for classic games to 66 (see docs/ratings.md)."""
DEFAULT_MAX_DEALS = 200
BATCH_DEALS = 4
"""Deals added at a time (each is two blocks: NEW's table and OLD's)."""
MIN_DEALS = 16
"""No decision before this many deals: with fewer, the estimated variance is rough enough to
lift the error rates well above α and β (7–10% instead of 5% at 2–4 deals, in simulations
resampling real classic deals; 4–6.5% from 16 on)."""

H1, H0, CONTINUE, INCONCLUSIVE = "H1", "H0", "continue", "inconclusive"


class SprtError(PlanError):
    """An SPRT test that cannot be set up: a bad margin, error rate, budget, or NEW equal to OLD."""


@dataclass(frozen=True, slots=True)
class Settings:
    """An SPRT test's parameters, as stored in the league's ``stopping`` JSON."""

    margin: float = DEFAULT_MARGIN
    alpha: float = 0.05
    beta: float = 0.05
    max_deals: int = DEFAULT_MAX_DEALS
    new: int = 0
    base: int = 1
    batch: int = BATCH_DEALS
    min_deals: int = MIN_DEALS

    def __post_init__(self) -> None:
        if not math.isfinite(self.margin) or self.margin <= 0:
            raise SprtError(
                f"the margin must be a positive improvement in score per game, got {self.margin:g}"
                " (it is measured in NEW's favour whichever way the variant counts)"
            )
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise SprtError(f"{name} must lie in (0, 0.5), got {value:g}")
        if self.max_deals < 1:
            raise SprtError(f"max deals must be at least 1, got {self.max_deals}")
        if self.batch < 1 or self.min_deals < 2:
            raise SprtError("a batch needs at least one deal, and a decision at least two")
        if self.new == self.base:
            raise SprtError("NEW and OLD must be different entrants")

    def to_json(self) -> dict[str, Any]:
        """The ``stopping`` JSON of the league."""
        return {
            "kind": KIND,
            "margin": self.margin,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_deals": self.max_deals,
            "new": self.new,
            "base": self.base,
            "batch": self.batch,
            "min_deals": self.min_deals,
        }

    @classmethod
    def from_json(cls, stopping: Mapping[str, Any]) -> Settings:
        """Settings from a league's ``stopping`` JSON (missing keys take the defaults)."""
        if stopping.get("kind") != KIND:
            raise SprtError(f"not an SPRT test: stopping kind {stopping.get('kind')!r}")
        known = {k: stopping[k] for k in cls.__slots__ if k in stopping}
        return cls(**known)


# -- the statistics --------------------------------------------------------------------------


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """The LLR bounds (lower, upper): accept H0 at or below log(β/(1−α)), H1 at or above log((1−β)/α)."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(differences: Sequence[float], margin: float, null: float = 0.0) -> float:
    """The GSPRT log-likelihood ratio of δ = ``margin`` against δ = ``null`` (normal approximation).

    Zero with fewer than two differences (no variance yet). When every difference is the same the
    estimated variance is zero and the ratio is infinite, towards the hypothesis nearer the mean:
    a copy of a deterministic bot plays exactly the same games, and that is certain evidence.
    """
    n = len(differences)
    if n < 2:
        return 0.0
    mean = statistics.fmean(differences)
    return _llr(n, mean, statistics.pvariance(differences, mu=mean), margin, null)


def _llr(n: int, mean: float, var: float, margin: float, null: float) -> float:
    drift = (margin - null) * (2 * mean - null - margin)
    if var <= 0:
        return 0.0 if drift == 0 else math.copysign(math.inf, drift)
    return n * drift / (2 * var)


def llr_path(differences: Sequence[float], margin: float, null: float = 0.0) -> list[float]:
    """The LLR after each difference, in one pass (Welford's running mean and variance)."""
    path = []
    mean = squares = 0.0
    for n, d in enumerate(differences, 1):
        step = d - mean
        mean += step / n
        squares += step * (d - mean)
        path.append(_llr(n, mean, squares / n, margin, null) if n >= 2 else 0.0)
    return path


def verdict(value: float, deals: int, settings: Settings) -> str:
    """H1, H0, continue, or inconclusive (the budget is spent between the bounds)."""
    lower, upper = bounds(settings.alpha, settings.beta)
    if deals >= settings.min_deals:
        if value >= upper:
            return H1
        if value <= lower:
            return H0
    return INCONCLUSIVE if deals >= settings.max_deals else CONTINUE


def verdict_text(verdict: str, new: str, base: str, margin: str, deals: int) -> str:
    """A verdict in words: ``margin`` with its unit (``"2 bull heads per game"``)."""
    if verdict == H1:
        return f"H1 accepted: {new} is better than {base} by at least {margin}"
    if verdict == H0:
        return f"H0 accepted: {new} is not better than {base} by {margin}"
    if verdict == INCONCLUSIVE:
        return f"inconclusive: {deals} deals spent without reaching a bound"
    return f"running: no bound reached after {deals} deals"


@dataclass(frozen=True, slots=True)
class State:
    """Where a test stands: the LLR path per deal, the bounds, the verdict."""

    deals: int
    llr: float
    """The LLR after every deal, clamped to the bounds as Fishtest reports it."""
    clamped: bool
    """The LLR lay beyond a bound (infinite when every difference was equal)."""
    lower: float
    upper: float
    verdict: str
    mean: float
    """The mean paired difference per game, positive when NEW is better."""
    sd: float
    """The sample standard deviation of the per-deal differences (0 below two deals)."""
    path: tuple[float, ...]
    """The clamped LLR after each deal (the dashboard's curve); decisions are taken per batch."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (finite numbers only)."""
        return {
            "deals": self.deals,
            "llr": self.llr,
            "clamped": self.clamped,
            "bounds": [self.lower, self.upper],
            "verdict": self.verdict,
            "mean_difference": self.mean,
            "sd": self.sd,
            "path": list(self.path),
        }


def _clamp(value: float, lower: float, upper: float) -> float:
    return min(max(value, lower), upper)


def state(differences: Sequence[float], settings: Settings) -> State:
    """The test's state after ``differences`` (in deal order)."""
    lower, upper = bounds(settings.alpha, settings.beta)
    path = tuple(_clamp(value, lower, upper) for value in llr_path(differences, settings.margin))
    raw = llr(differences, settings.margin)
    n = len(differences)
    return State(
        deals=n,
        llr=_clamp(raw, lower, upper),
        clamped=not lower <= raw <= upper,
        lower=lower,
        upper=upper,
        verdict=verdict(raw, n, settings),
        mean=statistics.fmean(differences) if differences else 0.0,
        sd=statistics.stdev(differences) if n >= 2 else 0.0,
        path=path,
    )


# -- deals and blocks ------------------------------------------------------------------------


class BlockLike(Protocol):
    """What a planned block must offer: its number and its entrants in seat order."""

    @property
    def number(self) -> int: ...

    @property
    def entrants(self) -> tuple[int, ...]: ...


class LeagueLike(Protocol):
    """What a stored test must offer (``workers.store.repo.League`` does)."""

    @property
    def seed(self) -> int: ...

    @property
    def entrants(self) -> Sequence[Any]: ...

    @property
    def stopping(self) -> Mapping[str, Any] | None: ...


def field_of(entrants: int, settings: Settings) -> tuple[int, ...]:
    """The field's positions: every entrant but NEW and OLD, in position order."""
    return tuple(p for p in range(entrants) if p not in (settings.new, settings.base))


def plan_deals(seed: int, first: int, count: int, entrants: int, settings: Settings) -> list[Block]:
    """Deals ``first … first+count−1``: deal j is block 2j (NEW's table) and 2j+1 (OLD's), one seed."""
    field = field_of(entrants, settings)
    blocks = []
    for deal in range(first, first + count):
        seed_of_deal = deal_seed(seed, deal)
        blocks.append(Block(2 * deal, (settings.new, *field), seed_of_deal))
        blocks.append(Block(2 * deal + 1, (settings.base, *field), seed_of_deal))
    return blocks


def deal_seed(seed: int, deal: int) -> int:
    """The plan seed of deal ``deal`` (blocks ``2 deal`` and ``2 deal + 1``)."""
    return derive_seed(seed, KIND, "deal", deal)


def first_blocks(seed: int, entrants: int, settings: Settings) -> list[Block]:
    """The blocks a new test is created with: its first batch."""
    return plan_deals(seed, 0, min(settings.batch, settings.max_deals), entrants, settings)


def paired_differences(
    results: Any,
    blocks: Sequence[BlockLike],
    settings: Settings,
    *,
    higher_is_better: bool,
) -> list[float]:
    """Each complete deal's paired difference in deal order, up to the first deal not complete.

    ``results`` are seat results (``block``, ``position``, ``score``: rows, or the arrays of
    :class:`workers.stats.ranking.Results`); a deal is complete when both of its blocks have every
    rotation stored.
    """
    side: dict[int, tuple[int, int, int]] = {}  # block number → (deal, whose score, games it needs)
    for block in blocks:
        who = settings.new if settings.new in block.entrants else settings.base
        side[block.number] = (block.number // 2, who, len(block.entrants))
    scores: dict[int, list[float]] = defaultdict(list)
    for number, position, score in _seat_scores(results):
        if number in side and position == side[number][1]:
            scores[number].append(score)
    sign = 1.0 if higher_is_better else -1.0
    differences = []
    for deal in range(len(blocks) // 2):
        new_scores, old_scores = scores.get(2 * deal, []), scores.get(2 * deal + 1, [])
        if 2 * deal not in side or 2 * deal + 1 not in side:
            break
        if len(new_scores) < side[2 * deal][2] or len(old_scores) < side[2 * deal + 1][2]:
            break
        differences.append(sign * (statistics.fmean(new_scores) - statistics.fmean(old_scores)))
    return differences


def _seat_scores(results: Any) -> Iterable[tuple[int, int, float]]:
    """(block, position, score) of every seat result, from rows or from arrays."""
    if hasattr(results, "block") and hasattr(results, "score"):  # workers.stats.ranking.Results
        columns = zip(results.block, results.position, results.score, strict=True)
        return ((int(b), int(p), float(s)) for b, p, s in columns)
    return ((int(r["block"]), int(r["position"]), float(r["score"])) for r in results)


def next_blocks(
    league: LeagueLike,
    results: Any,
    blocks: Sequence[BlockLike],
    *,
    higher_is_better: bool | None = None,
) -> list[Block]:
    """The next batch of deals to play, or [] when a bound is reached, the budget spent, or deals wait.

    Deterministic from the test's seed and its results. ``higher_is_better`` defaults to the
    league's variant's.
    """
    settings = Settings.from_json(league.stopping or {})
    if higher_is_better is None:
        higher_is_better = _higher_is_better(league)
    planned = len(blocks) // 2
    differences = paired_differences(results, blocks, settings, higher_is_better=higher_is_better)
    if len(differences) < planned:
        return []  # a planned deal is not played yet
    if verdict(llr(differences, settings.margin), planned, settings) != CONTINUE:
        return []
    count = min(settings.batch, settings.max_deals - planned)
    return plan_deals(league.seed, planned, count, len(league.entrants), settings)


def _higher_is_better(league: Any) -> bool:
    return bool(make_variant(league.variant, league.config).higher_is_better)
