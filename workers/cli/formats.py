"""The command line of the league formats for many bots: ``sampled`` and ``ladder``.

``league create`` takes their options (:func:`create_options`); ``league add NAME BOT…`` enters
bots in a running ladder and ``league stop NAME`` ends one (:func:`register`); ``league status``
shows a sampled league's balance and a ladder's state (:func:`format_status`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from arena.tournament import Block
from referee.clikit.options import json_flag
from workers.planning import PlanError, ladder
from workers.planning import formats as designs


def add_create_arguments(p: argparse.ArgumentParser) -> None:
    """``league create``'s options for the sampled and ladder formats."""
    p.add_argument(
        "--tables-per-bot",
        type=int,
        metavar="R",
        help="sampled: every bot plays R tables (n × R divisible by --table)",
    )
    p.add_argument("--tables", type=int, metavar="B", help="sampled: B tables in all, instead of R per bot")
    p.add_argument(
        "--placement", type=int, metavar="P", help="ladder: tables a new bot plays first (default 4)"
    )
    p.add_argument(
        "--round-deals",
        type=int,
        metavar="N",
        help="ladder: blocks a round adds where the ratings are uncertain (default 8)",
    )


def create_options(args: argparse.Namespace) -> dict[str, Any]:
    """``league create``'s format options, checked: keyword arguments for :func:`workers.league.prepare`."""
    sampled = args.tables_per_bot is not None or args.tables is not None
    laddered = args.placement is not None or args.round_deals is not None
    if sampled and args.format != "sampled":
        raise PlanError("--tables-per-bot and --tables are for a sampled league (--format sampled)")
    if laddered and args.format != "ladder":
        raise PlanError("--placement and --round-deals are for a ladder (--format ladder)")
    if args.format == "sampled":
        if args.until_confident is not None or args.max_deals is not None:
            raise PlanError(
                "a sampled league is a fixed plan: --until-confident and --max-deals are not for it"
            )
        return {"per_bot": args.tables_per_bot, "tables": args.tables}
    if args.format == "ladder":
        rule = ladder.rule(args.placement, args.round_deals, args.max_deals, args.until_confident)
        return {"stopping": rule.to_json()}
    return {}


def register(group: Any, guard: Any) -> None:
    """Add ``league add`` and ``league stop``."""
    p = group.add_parser("add", help="enter bots in a running ladder: they play placement tables first")
    p.add_argument("name")
    p.add_argument(
        "bots", help="stored bots (name or name@N), reference names, or .py files, comma-separated"
    )
    json_flag(p)
    p.set_defaults(func=guard(cmd_add))

    p = group.add_parser("stop", help="stop a ladder: the blocks planned are played, no new round is added")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=guard(cmd_stop))


def cmd_add(args: argparse.Namespace, engine: Any) -> int:
    # The store and the bots load SQLAlchemy: when a command runs, not at start-up.
    from workers.bots import entrants
    from workers.store import repo

    league = repo.find_league(engine, args.name)
    if league.format != ladder.FORMAT:
        raise PlanError(
            f"league {league.name!r} is a {league.format} league: only a ladder takes new entrants"
        )
    planned = repo.blocks_of(engine, league.id)
    why = ladder.finished(ladder.LadderRule.from_json(league.stopping), len(planned))
    if why or repo.league_phase(engine, league.id) == "finished":
        raise repo.ConflictError(
            f"league {league.name!r} is finished ({why or 'finished'}): it takes no new entrants"
        )
    refs = [r.strip() for r in args.bots.split(",") if r.strip()]
    if not refs:
        raise PlanError("name at least one bot to add")
    found = entrants.find(engine, refs, league.variant)
    entrants.check(found)  # bot files in the sandbox, before anything is stored
    positions = repo.add_entrants(engine, league.id, found.entrants)
    league = repo.find_league(engine, args.name)
    names = entrants.labels(league.entrants)
    info = {
        "league": league.name,
        "added": [{"position": p, "bot": names[p]} for p in positions],
        "entrants": len(league.entrants),
        "placement": ladder.LadderRule.from_json(league.stopping).placement,
    }
    if args.json:
        print(json.dumps(info))
        return 0
    print(
        f"league {league.name}: added {', '.join(names[p] for p in positions)}; {info['placement']} placement"
        f" tables each in the next round ({info['entrants']} entrants)"
    )
    return 0


def cmd_stop(args: argparse.Namespace, engine: Any) -> int:
    # The store loads SQLAlchemy: when a command runs, not at start-up.
    from workers.store import repo

    league = repo.find_league(engine, args.name)
    if league.format != ladder.FORMAT:
        raise PlanError(f"league {league.name!r} is a {league.format} league: only a ladder is stopped")
    rule = ladder.LadderRule.from_json(league.stopping)
    repo.set_stopping(engine, league.id, {**rule.to_json(), "stopped": True})
    if repo.league_phase(engine, league.id) == "started":
        repo.finish_league(engine, league.id)  # at once if nothing is left to play; else its last block does
    counts = repo.block_counts(engine, league.id)
    left = sum(v for k, v in counts.items() if k != "done")
    info = {"league": league.name, "stopped": True, "blocks_left": left}
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"league {league.name}: stopped; {left} planned block{'' if left == 1 else 's'} still to play")
    return 0


def format_status(engine: Any, league: Any) -> tuple[str, dict[str, Any]] | None:
    """``("design", …)`` for a sampled league, ``("ladder", …)`` for a ladder, else ``None``."""
    # The store loads SQLAlchemy: when a command runs, not at start-up.
    from workers.store import repo

    if league.format == "sampled":
        blocks = repo.blocks_of(engine, league.id)
        return "design", designs.status(
            len(league.entrants), league.table_size, league.deals, [b.entrants for b in blocks]
        )
    if league.format == "ladder":
        planned = [Block(b.number, b.entrants, b.seed) for b in repo.blocks_of(engine, league.id)]
        played = [r["position"] for r in repo.league_results(engine, league.id)]
        return "ladder", ladder.status(league, planned, played)
    return None


def print_format_status(league: Any, key: str, info: dict[str, Any]) -> None:
    """The text form of :func:`format_status`."""
    if key == "design":
        pairs, per_bot = info["pair_meetings"], info["tables_per_bot"]
        print(
            f"sampled: {info['kind']}, {info['tables']} tables × {info['deals_per_table']} deals;"
            f" tables per bot {per_bot['min']}–{per_bot['max']};"
            f" every pair meets {pairs['min']}–{pairs['max']} times (mean {pairs['mean']:g})"
            + ("; balanced" if info["balanced"] else "")
        )
        return
    # The bots load SQLAlchemy: not at start-up.
    from workers.bots import entrants

    names = entrants.labels(league.entrants)
    budget = (
        "until stopped" if info["max_deals"] is None else f"{info['deals_left']} of {info['max_deals']} left"
    )
    print(
        f"ladder: {info['state']}; {info['entrants']} entrants,"
        f" {info['deals_planned']} deals planned ({budget});"
        f" placement {info['placement']} tables, rounds of {info['round_deals']}"
    )
    if info["in_placement"]:
        print("  in placement: " + ", ".join(names[p] for p in info["in_placement"]))
