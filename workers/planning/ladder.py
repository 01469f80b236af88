"""Ladders, pure: a continuous league that takes new bots while it runs, as Kaggle's and Halite's arenas do.

A ladder (``league create NAME --format ladder``) is a league with a stopping rule of kind
``ladder`` (:mod:`workers.planning.rounds`), planned round by round from its definition, its seed, the
entrants it has *now* and every stored result:

- the first round is every starting entrant's **placement**: a sampled design
  (:mod:`workers.planning.formats`) in which each sits at ``placement`` tables (rounded up so that the
  tables come out even);
- an entrant added later (``league add NAME BOT``) gets its ``placement`` tables first, in the
  next round, each with the opponents it has met least (ties by the seed);
- a share of the rest of a round (``random_share`` of ``round_deals``, rounded up) are random
  tables drawn from the seed, so that no entrant is trapped among the same few opponents;
- the rest, up to ``round_deals`` blocks, goes where the ratings are uncertain: the
  tables :mod:`workers.planning.adaptive` chooses for the adjacent pairs of the batch fit
  (:mod:`workers.stats.ranking`) whose order is not settled at ``confidence``; when every pair is
  settled, the least-played entrants with the opponents they have met least;
- an entrant made ``inactive`` (a competition's version deactivated, :mod:`workers.competition`)
  keeps its results but sits at no new table; with fewer active entrants than a table's seats the
  ladder plans nothing (it is finished until one comes back);
- it runs until ``league stop`` (``stopped``) or until it has planned ``max_deals`` blocks.

Standings are the league's batch fit of every stored result, so they move as results arrive.
Block seeds include the number of entrants the round was planned for: two runners that planned a
round for different entrants (one saw a ``league add``, the other not) plan different blocks
under the same numbers, and :func:`workers.store.repo.add_blocks` keeps the first and refuses the
second, which leaves the newcomer to the next round.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournament import Block
from referee.rules.seeding import derive_seed
from workers.planning import formats
from workers.planning.errors import PlanError

KIND = "ladder"
FORMAT = "ladder"
DEFAULT_PLACEMENT = 4
DEFAULT_ROUND_DEALS = 8
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RANDOM_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class LadderRule:
    """A ladder's settings, as stored in ``leagues.stopping``."""

    placement: int = DEFAULT_PLACEMENT
    """Tables (blocks) a new entrant plays before the ratings choose its tables."""
    round_deals: int = DEFAULT_ROUND_DEALS
    """Blocks a round adds besides placement (at least; every pending placement is in it)."""
    max_deals: int | None = None
    """The budget: at most this many blocks in all; ``None``: until stopped."""
    confidence: float = DEFAULT_CONFIDENCE
    stopped: bool = False
    random_share: float = 0.0
    """The share of a round's non-placement tables drawn at random (a ladder stored before it: 0)."""
    inactive: tuple[int, ...] = ()
    """Entrant positions that get no new tables (their results stay)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "placement": self.placement,
            "round_deals": self.round_deals,
            "max_deals": self.max_deals,
            "confidence": self.confidence,
            "stopped": self.stopped,
            "random_share": self.random_share,
            "inactive": list(self.inactive),
        }

    @classmethod
    def from_json(cls, stopping: Mapping[str, Any] | None) -> LadderRule:
        if not stopping or stopping.get("kind") != KIND:
            raise PlanError(f"not a ladder: {stopping!r}")
        budget = stopping.get("max_deals")
        return cls(
            int(stopping["placement"]),
            int(stopping["round_deals"]),
            None if budget is None else int(budget),
            float(stopping["confidence"]),
            bool(stopping.get("stopped", False)),
            float(stopping.get("random_share", 0.0)),
            tuple(sorted(int(p) for p in stopping.get("inactive", ()))),
        )


def rule(
    placement: int | None = None,
    round_deals: int | None = None,
    max_deals: int | None = None,
    confidence: float | None = None,
    random_share: float | None = None,
) -> LadderRule:
    """A checked rule (``None``: the default); :class:`PlanError` with a one-line reason otherwise."""
    made = LadderRule(
        DEFAULT_PLACEMENT if placement is None else placement,
        DEFAULT_ROUND_DEALS if round_deals is None else round_deals,
        max_deals,
        DEFAULT_CONFIDENCE if confidence is None else confidence,
        random_share=DEFAULT_RANDOM_SHARE if random_share is None else random_share,
    )
    if not 0 <= made.random_share <= 1:
        raise PlanError(f"--random-share must be between 0 and 1, got {made.random_share:g}")
    if made.placement < 1:
        raise PlanError(f"--placement must be at least 1, got {made.placement}")
    if made.round_deals < 1:
        raise PlanError(f"--round-deals must be at least 1, got {made.round_deals}")
    if made.max_deals is not None and made.max_deals < 1:
        raise PlanError(f"--max-deals must be at least 1, got {made.max_deals}")
    if not 0.5 < made.confidence < 1:
        raise PlanError(f"--until-confident must be between 0.5 and 1 (exclusive), got {made.confidence:g}")
    return made


def _seed(seed: int, entrants: int, number: int) -> int:
    return derive_seed(seed, "ladder", entrants, "block", number)


block_seed = _seed
"""The plan seed of block ``number`` of a round planned for ``entrants`` (:mod:`workers.planning.deals`)."""


def first_round(entrants: int, table_size: int, seed: int, rule_: LadderRule) -> list[Block]:
    """The starting entrants' placement: a sampled design, each at ``placement`` tables or a few more."""
    if not 2 <= table_size <= entrants:
        raise PlanError(
            f"a table of {table_size} needs at least {table_size} entrants, the ladder starts with {entrants}"
        )
    step = table_size // math.gcd(entrants, table_size)
    per_bot = -(-rule_.placement // step) * step
    tables = formats.design(entrants, table_size, per_bot, derive_seed(seed, "ladder", "placement")).tables
    if rule_.max_deals is not None and rule_.max_deals < len(tables):
        raise PlanError(
            f"--max-deals {rule_.max_deals} is less than the placement round ({len(tables)} deals)"
        )
    return [Block(number, table, _seed(seed, entrants, number)) for number, table in enumerate(tables)]


def finished(rule_: LadderRule, planned: int) -> str | None:
    """Why the ladder plans nothing more (``stopped``, ``budget spent``), or ``None``: it goes on."""
    if rule_.stopped:
        return "stopped"
    if rule_.max_deals is not None and planned >= rule_.max_deals:
        return "budget spent"
    return None


def next_blocks(league: Any, results: Any, blocks: Sequence[Block]) -> list[Block]:
    """:func:`workers.planning.rounds.next_blocks` for ``{"kind": "ladder"}`` leagues (module docstring)."""
    rule_ = LadderRule.from_json(league.stopping)
    n, k = len(league.entrants), league.table_size
    if finished(rule_, len(blocks)):
        return []
    if not blocks:
        return first_round(n, k, league.seed, rule_)
    out = set(rule_.inactive)
    active = [p for p in range(n) if p not in out]
    if len(active) < k:
        return []
    room = math.inf if rule_.max_deals is None else rule_.max_deals - len(blocks)
    seated: Counter[int] = Counter(p for b in blocks for p in b.entrants)
    met: Counter[tuple[int, int]] = Counter(
        (a, b) for block in blocks for a in block.entrants for b in block.entrants if a != b
    )
    tables: list[tuple[int, ...]] = []

    def take(table: tuple[int, ...]) -> None:
        tables.append(table)
        seated.update(table)
        met.update((a, b) for a in table for b in table if a != b)

    for newcomer in active:
        while seated[newcomer] < rule_.placement and len(tables) < room:
            take(_with_least_met([newcomer], active, k, met, seated, league.seed, len(blocks) + len(tables)))
    wanted = min(room, len(tables) + rule_.round_deals)
    drawn = min(int(wanted - len(tables)), math.ceil(rule_.round_deals * rule_.random_share))
    after = max(b.number for b in blocks)
    for _ in range(drawn):
        pick = random.Random(derive_seed(league.seed, "ladder", "random", after + 1 + len(tables)))
        take(tuple(sorted(pick.sample(active, k))))
    if len(tables) < wanted:
        for block in _uncertain(league, results, blocks, rule_, int(wanted - len(tables))):
            if not out.intersection(block.entrants):
                take(tuple(sorted(block.entrants)))
    while len(tables) < wanted:
        least = min(active, key=lambda p: (seated[p], derive_seed(league.seed, "ladder", "least", p)))
        take(_with_least_met([least], active, k, met, seated, league.seed, len(blocks) + len(tables)))
    return [
        Block(after + 1 + i, table, _seed(league.seed, n, after + 1 + i)) for i, table in enumerate(tables)
    ]


def _with_least_met(
    seated_now: list[int],
    active: Sequence[int],
    k: int,
    met: Mapping[tuple[int, int], int],
    seated: Mapping[int, int],
    seed: int,
    salt: int,
) -> tuple[int, ...]:
    """A table around ``seated_now``: each further seat the bot that has met the table least, then
    the one that has played least, then by the seed."""
    table = list(seated_now)
    while len(table) < k:
        table.append(
            min(
                (p for p in active if p not in table),
                key=lambda p: (
                    sum(met.get((p, q), 0) for q in table),
                    seated.get(p, 0),
                    derive_seed(seed, "ladder", "seat", salt, p),
                ),
            )
        )
    return tuple(sorted(table))


def _uncertain(
    league: Any, results: Any, blocks: Sequence[Block], rule_: LadderRule, room: int
) -> list[Block]:
    """Up to ``room`` tables for the pairs whose order is in doubt (:mod:`workers.planning.adaptive`)"""
    # adaptive brings the ranking and its numerical code: not when the command line's root loads
    # ladder at start-up.
    from workers.planning import adaptive

    asked = dataclasses.replace(
        league, stopping=adaptive.rule(rule_.confidence, len(blocks) + room).to_json()
    )
    return list(adaptive.next_blocks(asked, results, blocks))[:room]


def status(league: Any, planned: Sequence[Block], played: Iterable[int]) -> dict[str, Any]:
    """A ladder's state for ``league status``: its settings, budget, and who is still in placement.

    ``played``: the entrant position of every stored seat result (one per seat of each game).
    """
    rule_ = LadderRule.from_json(league.stopping)
    games: Counter[int] = Counter(played)
    tables: Counter[int] = Counter(p for b in planned for p in b.entrants)
    k = league.table_size
    return {
        **rule_.to_json(),
        "entrants": len(league.entrants),
        "deals_planned": len(planned),
        "deals_left": None if rule_.max_deals is None else max(rule_.max_deals - len(planned), 0),
        # Placement is over for an entrant once its placement tables are played (k games each).
        "in_placement": [
            p
            for p in range(len(league.entrants))
            if p not in rule_.inactive and (games[p] < rule_.placement * k or not tables[p])
        ],
        "state": finished(rule_, len(planned)) or "running",
    }
