"""League planning, pure: which tables play, as duplicate blocks with seeds from the league seed.

Round-robin plays every table of ``table_size`` entrants out of all of them; a gauntlet plays
the challenger (entrant 0) at every table it can sit at with the rest of the field; a sampled
league plays a balanced design in which every entrant sits at ``per_bot`` tables
(:mod:`workers.planning.formats`); a ladder is planned round by round
(:mod:`workers.planning.ladder`). Each table gets ``deals`` duplicate blocks: one seeded deal
replayed once per seat rotation. The same league (entrants, format, sizes, seed) always plans the same blocks.
"""

from __future__ import annotations

import itertools

from arena.tournament import Block, plan_round_robin
from referee.rules.seeding import derive_seed
from workers.planning.errors import PlanError
from workers.planning.formats import plan_sampled, tables_per_bot

__all__ = ["FORMATS", "PlanError", "fixed_plan_seed", "plan_league"]

FORMATS = ("round-robin", "gauntlet", "sampled", "ladder")


def plan_league(
    fmt: str, entrants: int, table_size: int, deals: int, seed: int, *, per_bot: int | None = None
) -> list[Block]:
    """The blocks of a league, numbered from 0 (``per_bot``: a sampled league's tables per entrant)."""
    if fmt not in FORMATS:
        raise PlanError(f"unknown league format {fmt!r} (known: {', '.join(FORMATS)})")
    if not 2 <= table_size <= entrants:
        raise PlanError(
            f"a table of {table_size} needs at least {table_size} entrants, the league has {entrants}"
        )
    if deals < 1:
        raise PlanError(f"deals must be at least 1, got {deals}")
    if fmt == "round-robin":
        return plan_round_robin(entrants, table_size, deals, seed)
    if fmt == "sampled":
        return plan_sampled(
            entrants, table_size, tables_per_bot(entrants, table_size, per_bot, None), deals, seed
        )
    if fmt == "ladder":
        raise PlanError("a ladder is planned round by round (workers.planning.ladder), not all at once")
    blocks: list[Block] = []
    for table, field in enumerate(itertools.combinations(range(1, entrants), table_size - 1)):
        for deal in range(deals):
            blocks.append(Block(len(blocks), (0, *field), derive_seed(seed, "gauntlet", table, "deal", deal)))
    return blocks


_TABLE_TAGS = {"round-robin": "table", "gauntlet": "gauntlet", "sampled": "sampled"}


def fixed_plan_seed(fmt: str, seed: int, deals: int, number: int) -> int:
    """The plan seed of block ``number`` of a fixed plan (:func:`plan_league`): its table's
    ``number // deals``-th table, deal ``number % deals``, whatever the tables are."""
    if fmt not in _TABLE_TAGS:
        raise PlanError(f"a {fmt} league has no fixed plan")
    return derive_seed(seed, _TABLE_TAGS[fmt], number // deals, "deal", number % deals)
