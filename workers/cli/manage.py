"""Operators' housekeeping commands: removing what a store no longer needs (``league delete``,
``bot retire``, ``bot unretire``). Registered by :func:`workers.cli.register` beside the other
league commands.

- ``league delete NAME [--yes] [--json]`` removes a league and everything stored for it (its
  blocks, matches, seat results, transcripts and table), never the bot versions; it refuses a
  league one of whose blocks is being played (stop its ``league run`` or workers first), and asks
  before it deletes unless ``--yes`` is given (off a terminal ``--yes`` is required).
- ``bot retire NAME[@N] [--json]`` retires a version (or every version of a bot): it enters no new
  league, while the leagues it played keep it in their results and transcripts; ``bot list``
  shows it retired. ``bot unretire NAME[@N]`` brings it back.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from referee.clikit.options import json_flag


def register(league: Any, bots: Any, guard: Callable[..., Any]) -> None:
    """Add the housekeeping commands to the ``league`` and ``bot`` command groups."""
    p = league.add_parser(
        "delete",
        help="remove a league and its blocks, matches, transcripts and table (the bots stay);"
        " refused while a block of it is being played",
    )
    p.add_argument("name")
    p.add_argument("--yes", action="store_true", help="delete without asking (required off a terminal)")
    json_flag(p)
    p.set_defaults(func=guard(cmd_delete))

    p = bots.add_parser(
        "retire",
        help="retire a bot version (NAME@N) or every version of a bot (NAME): it enters no new league,"
        " and stays in the leagues it played",
    )
    p.add_argument("ref", metavar="NAME[@N]")
    json_flag(p)
    p.set_defaults(func=guard(cmd_retire))

    p = bots.add_parser("unretire", help="bring a retired bot version (NAME@N) or bot (NAME) back")
    p.add_argument("ref", metavar="NAME[@N]")
    json_flag(p)
    p.set_defaults(func=guard(cmd_unretire))


def cmd_delete(args: argparse.Namespace, engine: Any) -> int:
    # The store (server extra): when the command runs, not at start-up.
    from workers.store import repo

    league = repo.find_league(engine, args.name)
    if not args.yes:
        counts = repo.league_counts(engine, league.id)
        what = (
            f"league {league.name}: {sum(counts['blocks'].values())} blocks, {counts['matches']} matches"
            " with their transcripts, and its table"
        )
        if not sys.stdin.isatty():
            print(f"sixnimmt: error: deleting {what}: add --yes to delete it", file=sys.stderr)
            return 2
        answer = input(f"delete {what}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print(f"league {league.name}: not deleted", file=sys.stderr)
            return 1
    deleted = repo.delete_league(engine, league.name)
    removed = {
        "blocks": deleted.blocks,
        "matches": deleted.matches,
        "seat_results": deleted.seat_results,
        "transcripts": deleted.transcripts,
        "standings": deleted.ratings,
        "entrants": deleted.entrants,
    }
    if args.json:
        print(json.dumps({"league": deleted.league, "deleted": True, "removed": removed}))
        return 0
    print(
        f"league {deleted.league} deleted: {deleted.blocks} blocks, {deleted.matches} matches"
        f" ({deleted.seat_results} seat results, {deleted.transcripts} transcripts),"
        f" {deleted.ratings} standings rows, {deleted.entrants} entrant places; the bot versions stay"
    )
    return 0


def cmd_retire(args: argparse.Namespace, engine: Any) -> int:
    return _set_retired(args, engine, retired=True)


def cmd_unretire(args: argparse.Namespace, engine: Any) -> int:
    return _set_retired(args, engine, retired=False)


def _set_retired(args: argparse.Namespace, engine: Any, *, retired: bool) -> int:
    # The store (server extra): when the command runs, not at start-up.
    from workers.store import repo

    changed = repo.set_retired(engine, args.ref, retired)
    labels = [f"{v.bot}@{v.version}" for v in changed]
    if args.json:
        print(json.dumps({"ref": args.ref, "retired": retired, "changed": labels}))
        return 0
    state = "retired" if retired else "not retired"
    if not labels:
        print(f"{args.ref}: {state} already")
    elif retired:
        print(
            f"retired {', '.join(labels)}: enters no new league; the leagues it played keep it"
            f" ('sixnimmt bot unretire {args.ref}' brings it back)"
        )
    else:
        print(f"{', '.join(labels)}: not retired any more, may enter leagues again")
    return 0
