"""``sixnimmt competition create|enter|close|run|status|list|show`` (:mod:`workers.competition`).

The organiser's commands: a competition is created with its settings, accounts enter it (through
the API, ``POST /v1/competitions/NAME/entries``, or here), ``competition run`` plays its season
and then its final on the local pool or on Celery as ``league run`` plays a league, and
``competition close`` ends its season before (or without) its ``--ends``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from referee.clikit import tables
from referee.clikit.options import json_flag, parse_options, variant_options
from referee.clikit.progress import progress_bar
from referee.settings import load as load_settings


def register(sub: Any, guard: Callable[..., Any]) -> None:
    """Add the ``competition`` command group to the root parser."""
    group = sub.add_parser(
        "competition", help="competitions: a season ladder of participants' active bots, then a final"
    ).add_subparsers(title="competition commands", metavar="COMMAND")

    p = group.add_parser("create", help="create a competition; accounts enter it, their active bots play")
    p.add_argument("name")
    variant_options(p)
    p.add_argument("--table", type=int, default=4, metavar="K", help="players at a table (default 4)")
    p.add_argument(
        "--submissions-per-day", type=int, required=True, metavar="N", help="per account (UTC day)"
    )
    p.add_argument(
        "--active-per-account", type=int, required=True, metavar="M", help="active versions an account enters"
    )
    p.add_argument("--ends", metavar="TIME", help="when the season ends (ISO 8601; default UTC)")
    p.add_argument(
        "--final-top", type=int, required=True, metavar="T", help="the season's top T play the final"
    )
    p.add_argument(
        "--final-until-confident",
        type=float,
        required=True,
        metavar="C",
        help="the final runs until its order is settled at confidence C",
    )
    p.add_argument(
        "--final-max-deals", type=int, default=200, metavar="N", help="the final's budget (default 200)"
    )
    p.add_argument(
        "--placement", type=int, metavar="P", help="season: tables a new bot plays first (default 4)"
    )
    p.add_argument(
        "--round-deals", type=int, metavar="N", help="season: blocks a ladder round adds (default 8)"
    )
    json_flag(p)
    p.set_defaults(func=guard(cmd_create, creates=True))

    p = group.add_parser("enter", help="enter an account (its active versions of the variant play)")
    p.add_argument("name")
    p.add_argument("account")
    json_flag(p)
    p.set_defaults(func=guard(cmd_enter))

    p = group.add_parser("close", help="end the season now: submissions freeze and the final is made")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=guard(cmd_close))

    p = group.add_parser(
        "run", help="play the season until its end (or --rounds), then the final (Celery if a broker is set)"
    )
    p.add_argument("name")
    p.add_argument("--rounds", type=int, metavar="R", help="leave the season after R ladder rounds")
    p.add_argument("--local", action="store_true", help="use the local process pool even with a broker set")
    p.add_argument(
        "--processes", type=int, default=0, help="local pool size (default: $SIXNIMMT_WORKERS or cores)"
    )
    json_flag(p)
    p.set_defaults(func=guard(cmd_run))

    p = group.add_parser("status", help="state, entrants, the season's and the final's progress")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=guard(cmd_status))

    p = group.add_parser("list", help="every competition")
    json_flag(p)
    p.set_defaults(func=guard(cmd_list))

    p = group.add_parser("show", help="the season's and the final's standings (public)")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=guard(cmd_show))


def _when(text: str) -> dt.datetime:
    from workers.planning import PlanError

    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise PlanError(f"--ends {text!r} is not an ISO 8601 time (e.g. 2027-03-01T18:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def cmd_create(args: argparse.Namespace, engine: Any) -> int:
    # The competition's modules load SQLAlchemy and the league: when a command runs.
    from referee.rules.errors import RulesError
    from workers import competition
    from workers.planning import PlanError

    try:
        config = parse_options(args.option)
    except RulesError as exc:
        raise PlanError(str(exc)) from None
    found = competition.create(
        engine,
        args.name,
        variant=args.variant,
        config=config,
        table_size=args.table,
        submissions_per_day=args.submissions_per_day,
        active_per_account=args.active_per_account,
        ends_at=_when(args.ends) if args.ends else None,
        final_top=args.final_top,
        final_until_confident=args.final_until_confident,
        final_max_deals=args.final_max_deals,
        placement=args.placement,
        round_deals=args.round_deals,
    )
    info = found.settings()
    if args.json:
        print(json.dumps(info))
        return 0
    ends = f"ends {info['ends_at']}" if info["ends_at"] else "ends at 'sixnimmt competition close'"
    print(
        f"competition {found.name}: {found.variant}, tables of {found.table_size}; {ends}; final among the"
        f" top {found.final_top} until {found.final_until_confident:g} confident (at most"
        f" {found.final_max_deals} deals)"
    )
    return 0


def cmd_enter(args: argparse.Namespace, engine: Any) -> int:
    from workers import competition
    from workers.store import repo
    from workers.store.schema import bot_accounts

    with engine.connect() as conn:
        account_id = conn.execute(
            bot_accounts.select()
            .with_only_columns(bot_accounts.c.id)
            .where(bot_accounts.c.name == args.account)
        ).scalar()
    if account_id is None:
        raise repo.NotFoundError(f"no account {args.account!r}")
    info = competition.enter(engine, args.name, int(account_id))
    info["account"] = args.account
    if args.json:
        print(json.dumps(info))
        return 0
    print(
        f"competition {args.name}: {args.account} "
        + ("entered" if info["new"] else "had entered already")
        + "; its active versions play the season"
    )
    return 0


def cmd_close(args: argparse.Namespace, engine: Any) -> int:
    from workers import competition
    from workers.store import repo

    before = repo.find_competition(engine, args.name).state
    found = competition.close(engine, args.name)
    finalists = []
    if found.final_league_id is not None:
        from workers import league as leagues

        finalists = leagues.entrant_names(repo.league_by_id(engine, found.final_league_id))
    out = {
        "competition": args.name,
        "state": found.state,
        "closed_now": before == "season",
        "final": finalists,
    }
    if args.json:
        print(json.dumps(out))
        return 0
    if before != "season":
        print(f"competition {args.name}: closed already ({found.state})")
    elif finalists:
        print(f"competition {args.name}: closed; the final is {', '.join(finalists)}")
    else:
        print(f"competition {args.name}: closed; fewer than two ranked entrants, no final")
    return 0


def cmd_run(args: argparse.Namespace, engine: Any) -> int:
    from workers import competition
    from workers.cli import running

    settings = load_settings()
    with progress_bar(0, "blocks", args.json) as bar, running.keep_interrupts() as pressed:

        def play(league: Any, planned: Callable[[int], None]) -> dict[str, int]:
            from workers.store import repo

            bar.total = (bar.total or 0) + sum(
                1 for b in repo.blocks_of(engine, league.id) if b.status != "done"
            )
            bar.refresh()
            grow = running.grow(bar)

            def round_added(added: int) -> None:
                grow(added)
                planned(added)

            if running.on_celery(settings, local=args.local):
                from workers.queue import runner

                return runner.run_celery(
                    engine,
                    league,
                    progress=bar.update,
                    planned=round_added,
                    notify=running.notify(bar),
                    interrupted=pressed,
                )
            from workers import league as leagues

            # As league run: Ctrl-C or the season's end (raised from round_added) stops the pool
            # and gives the claims back (workers.league.run_local).
            return leagues.run_local(
                engine,
                league,
                processes=args.processes or settings.workers or os.cpu_count() or 1,
                progress=bar.update,
                planned=round_added,
                notify=running.notify(bar),
            )

        out = competition.run(
            engine,
            args.name,
            play,
            rounds=args.rounds,
            say=lambda line: bar.write(f"sixnimmt: {line}", file=sys.stderr),
        )
    ran = {phase: {str(k): v for k, v in counts.items()} for phase, counts in out["ran"].items()}
    out = {**out, "ran": ran}
    if args.json:
        print(json.dumps(out))
        return 0
    played = ", ".join(f"{phase}: {sum(c.values())} blocks" for phase, c in ran.items()) or "nothing played"
    print(f"competition {args.name}: {out['state']} ({played})")
    return 0


def cmd_status(args: argparse.Namespace, engine: Any) -> int:
    from workers import competition

    info = competition.status(engine, args.name)
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"competition {info['name']}: {info['state']}, {info['variant']}, tables of {info['table_size']}")
    print(f"  entries: {info['entries']}; entrants now: {', '.join(info['entrants']) or 'none'}")
    if info.get("seconds_left") is not None:
        print(f"  season ends {info['ends_at']} ({int(info['seconds_left'])} s left)")
    for phase in ("season", "final"):
        league = info[phase]
        if league is None:
            print(f"  {phase}: not begun")
            continue
        blocks = ", ".join(f"{k} {v}" for k, v in sorted(league["blocks"].items()))
        print(f"  {phase}: league {league['league']} ({league['phase']}), blocks: {blocks or 'none'}")
    return 0


def cmd_list(args: argparse.Namespace, engine: Any) -> int:
    from workers.store import repo

    rows = repo.list_competitions(engine)
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no competitions")
        return 0
    tables.print_table(
        ["competition", "variant", "table", "state", "entries", "ends"],
        [
            [r["name"], r["variant"], r["table_size"], r["state"], r["entries"], r["ends_at"] or "-"]
            for r in rows
        ],
    )
    return 0


def cmd_show(args: argparse.Namespace, engine: Any) -> int:
    from workers import competition
    from workers.store import repo

    competition.touch(engine, args.name)
    info = repo.competition(engine, args.name)
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"competition {info['name']}: {info['state']}")
    for phase in ("season", "final"):
        part = info[phase]
        if part is None:
            print(f"{phase}: not begun")
            continue
        print(f"{phase} (league {part['league']}):")
        rows = []
        for row in part["standings"]:
            apart = row["next"]
            rows.append(
                [
                    row["rank"] if row["rank"] is not None else "-",
                    _rank_interval(row),
                    row["bot"],
                    row["account"] or "platform",
                    _number(row["score"]),
                    f"[{_number(row['score_low'])}, {_number(row['score_high'])}]",
                    row["games"],
                    "" if apart is None else (">" if apart["told_apart"] else "= can't tell apart"),
                ]
            )
        tables.print_table(
            ["rank", "rank interval", "bot", "account", "score", "interval", "games", "next"], rows
        )
    return 0


def _rank_interval(row: dict[str, Any]) -> str:
    if row["rank_low"] is None:
        return "-"
    return f"{row['rank_low']}-{row['rank_high']}"


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}"
