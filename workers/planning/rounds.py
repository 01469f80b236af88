"""Leagues that add deals as they go: which blocks to play next, by the league's stopping rule.

A league whose ``stopping`` column is set is planned round by round. After every round the run
loops (:func:`workers.league.run_local`, :func:`workers.queue.runner.run_celery`) call
:func:`next_blocks` with the league, every stored result and every planned block; it returns the
next round's blocks, numbered after the last planned one, or ``[]`` when the league is finished.
Each kind of rule is one module with a function of the same signature:

- ``adaptive`` (``league create --until-confident C --max-deals N``): :mod:`workers.planning.adaptive`;
- ``sprt`` (``bot test``): :mod:`workers.planning.sprt`;
- ``ladder`` (``league create --format ladder``): :mod:`workers.planning.ladder`, whose rounds also
  depend on the entrants it has when the round is planned (``league add``).

A rule must be a pure function of the league's definition (seed included), the results and the
planned blocks: never of timing or of the order the results were stored in. Two runners that look
at the same league therefore plan the same round, and :func:`workers.store.repo.add_blocks` stores
it once.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arena.tournament import Block
from workers.planning.errors import PlanError

if TYPE_CHECKING:
    from workers.stats.ranking import Results
    from workers.store.repo import League

RULES = {
    "adaptive": "workers.planning.adaptive",
    "sprt": "workers.planning.sprt",
    "ladder": "workers.planning.ladder",
}
"""Stopping-rule kind → the module whose ``next_blocks`` plans its rounds."""


def next_blocks(
    league: League, results: Results | Iterable[Mapping[str, Any]], blocks: Sequence[Block]
) -> list[Block]:
    """The next round of a league with a stopping rule; ``[]``: finished (or a fixed plan)."""
    if not league.stopping:
        return []
    kind = league.stopping.get("kind")
    if kind not in RULES:
        raise PlanError(f"league {league.name!r} has an unknown stopping rule {kind!r}")
    planner = importlib.import_module(RULES[kind]).next_blocks
    ordered = sorted(blocks, key=lambda b: b.number)
    new: list[Block] = planner(league, results, ordered)
    after = ordered[-1].number if ordered else -1
    if any(b.number <= after for b in new):
        raise PlanError(f"the {kind} rule planned block numbers that are taken already")
    return new
