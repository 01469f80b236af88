"""``sixnimmt league …``, ``sixnimmt worker`` and ``sixnimmt bot submit|list`` (an entry-point plugin)."""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from bot_sdk import cli as sdk_cli
from referee.clikit import tables
from referee.clikit.options import json_flag, parse_options, variant_options
from referee.clikit.progress import progress_bar
from referee.rules.registry import make_variant
from referee.settings import load as load_settings
from workers.cli import running


class LeagueCommandError(RuntimeError):
    """A league command failed in a way the user can act on; the message says how."""


LIBRARIES = ("sqlalchemy", "alembic", "celery", "numpy", "scipy", "choix", "openskill")
"""What the league's commands import, all from the ``server`` extra."""


def register(sub: Any) -> None:
    """Add the league commands to the root parser.

    Without the ``server`` extra (a bot author's base install) every command is there as a stand-in
    that says which extra to install (:func:`bot_sdk.cli.stand_in`).
    """
    missing = next((name for name in LIBRARIES if find_spec(name) is None), None)
    if missing:
        for name in ("league", "worker", "account", "competition"):
            sdk_cli.stand_in(sub, name, missing)
        for name in ("submit", "list", "test", "account", "key"):
            sdk_cli.stand_in(sdk_cli.BOT_COMMANDS, name, missing)
        return
    league = sub.add_parser("league", help="leagues in the store: create, run, status, standings")
    group = league.add_subparsers(title="league commands", metavar="COMMAND")

    p = group.add_parser("create", help="plan a league and store it")
    p.add_argument("name")
    p.add_argument(
        "--bots", required=True, help="stored bots (name or name@N), reference names, or .py files"
    )
    variant_options(p)
    p.add_argument(
        "--format",
        default="round-robin",
        help="round-robin (default), gauntlet, sampled or ladder; see docs/league.md#formats",
    )
    p.add_argument("--table", type=int, default=4, help="seats per table")
    p.add_argument("--deals", type=int, default=2, help="duplicate deals per table (default: 2)")
    p.add_argument(
        "--seed",
        type=int,
        help="the league's seed: its plan and deals then follow from it alone, as secret as it is"
        " (default: a random seed and deal key, published once the league is finished;"
        " docs/league.md#seeds-and-secrets)",
    )
    p.add_argument(
        "--until-confident",
        type=float,
        metavar="C",
        help="adaptive: add deals where the order is in doubt until every adjacent pair is settled for"
        " sorting by a t test calibrated so that about C of such leagues end in the exact order"
        " (0.5 < C < 1); a sorting rule, not the standings' 'told apart'; see docs/ratings.md",
    )
    p.add_argument(
        "--max-deals",
        type=int,
        metavar="N",
        help="adaptive: the budget, at most N deals in all (first round included), each played once per"
        " seat rotation; ladder: its budget (default: until 'league stop')",
    )
    # The command modules below import the server extra (numpy, SQLAlchemy): only once it is found.
    from workers.cli import formats as formats_cli

    formats_cli.add_create_arguments(p)
    p.add_argument(
        "--fresh-processes",
        action="store_true",
        help="start every block's bots afresh, so no bot carries memory from block to block"
        " (default: warm processes a worker keeps; see docs/league.md#warm-bots)",
    )
    json_flag(p)
    p.set_defaults(func=_guard(cmd_create, lazy=True))
    formats_cli.register(group, _guard)

    p = group.add_parser("run", help="play the league's remaining blocks (Celery if a broker is set)")
    p.add_argument("name")
    p.add_argument("--local", action="store_true", help="use the local process pool even with a broker set")
    p.add_argument(
        "--processes", type=int, default=0, help="local pool size (default: $SIXNIMMT_WORKERS or cores)"
    )
    json_flag(p)
    p.set_defaults(func=_guard(cmd_run))

    p = group.add_parser(
        "start", help="hand the league to the Celery workers, which finish it with nobody watching"
    )
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_start))

    p = group.add_parser("status", help="blocks by status, matches, faults")
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_status))

    p = group.add_parser(
        "standings", help="the table from a batch fit, intervals, pairs not told apart, head-to-head"
    )
    p.add_argument("name")
    p.add_argument("--h2h", action="store_true", help="also print the head-to-head table")
    p.add_argument(
        "--method",
        choices=["ls", "pl"],
        default="ls",
        help="ls: score per game with per-game effects (default); pl: Plackett-Luce on finishing orders",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="for intervals and tests (default 0.95)")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_standings))

    p = group.add_parser("list", help="every league")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_list))

    p = group.add_parser(
        "verify-deals",
        help="check every block's deal seed against the seed and deal key published at the league's end",
    )
    p.add_argument("name")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_verify_deals))

    p = group.add_parser("migrate", help="bring the store to the newest schema")
    p.set_defaults(func=_guard(cmd_migrate, creates=True))

    p = sub.add_parser(
        "worker",
        help="run a Celery worker that plays the blocks of its store's started leagues"
        " (needs SIXNIMMT_BROKER_URL)",
    )
    p.add_argument("--concurrency", type=int, default=0, help="worker processes (default: cores)")
    p.add_argument(
        "--hostname",
        help="the worker's node name, unique among the workers of a broker: NAME@HOST, where %%h is"
        " this machine's host name (Celery's -n; default: sixnimmt-PID@%%h, unique per process)",
    )
    p.add_argument("--loglevel", default="INFO")
    p.add_argument(
        "--metrics-port",
        type=int,
        help="serve Prometheus /metrics on this port, 0: off (default: $SIXNIMMT_WORKER_METRICS_PORT, 9465)",
    )
    p.set_defaults(func=cmd_worker)

    bots = sdk_cli.BOT_COMMANDS
    p = bots.add_parser("submit", help="store a bot as a new version after checking it in the sandbox")
    p.add_argument("path", type=Path)
    p.add_argument("--name", required=True, help="the stored bot's name; each submit adds a version NAME@N")
    p.add_argument("--entry", help="entry point for a directory, e.g. main.py:MyBot")
    p.add_argument(
        "--variant",
        default="classic",
        help="the game variant (default: %(default)s; 'sixnimmt variants' lists them)",
    )
    json_flag(p)
    p.set_defaults(func=_guard(cmd_submit, lazy=True))

    p = bots.add_parser("list", help="stored bots and their versions")
    json_flag(p)
    p.set_defaults(func=_guard(cmd_bot_list))

    # Server extra (numpy, SQLAlchemy): only once it is found, as formats_cli above.
    from workers.cli import accounts as accounts_cli
    from workers.cli import bottest, manage
    from workers.cli import competitions as competitions_cli

    bottest.register(bots, _guard)
    accounts_cli.register(bots, _guard)
    accounts_cli.register_accounts(sub, _guard)
    manage.register(group, bots, _guard)
    competitions_cli.register(sub, _guard)


class _Store:
    """A command's store, opened (and brought to the newest schema) on first use.

    :meth:`reader` opens a store that exists and creates nothing; :meth:`writer` creates the store
    if it is not there. Reading commands use the first; the commands that store something use the
    second, and ``league create`` and ``bot submit`` only once their checks have passed, so a
    command that fails creates no store either.
    """

    def __init__(self) -> None:
        self.engine: Any = None

    def existing(self) -> Any:
        """The store if it exists, else ``None`` (nothing created)."""
        # The store (SQLAlchemy): on first use, not at start-up.
        from workers.store.engine import StoreMissingError

        try:
            return self.reader()
        except StoreMissingError:
            return None

    def reader(self) -> Any:
        """The store; :class:`~workers.store.engine.StoreMissingError` if it does not exist."""
        # The store (SQLAlchemy): on first use, not at start-up.
        from workers.store.engine import open_existing

        if self.engine is None:
            self.engine = open_existing()
            _migrate(self.engine)
        return self.engine

    def writer(self) -> Any:
        """The store, created if it does not exist yet."""
        # The store (SQLAlchemy): on first use, not at start-up.
        from workers.store.engine import make_engine

        if self.engine is None:
            self.engine = make_engine()
            _migrate(self.engine)
        return self.engine

    def where(self) -> str:
        # The store (SQLAlchemy): on first use, not at start-up.
        from workers.store.engine import StoreError, describe, where

        if self.engine is not None:
            return describe(self.engine)
        try:
            return where()
        except StoreError:
            return "the store"

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


def _guard(command: Any, *, creates: bool = False, lazy: bool = False) -> Any:
    """Turn store and league errors into one clear line and exit status 2.

    The command gets the engine of a store that exists (a reading command: a missing store is an
    error, and none is created), of a store created if needed (``creates``), or (``lazy``) the
    :class:`_Store` itself, to open for writing once it has checked what it was given.
    """

    def run(args: argparse.Namespace) -> int:
        # The error types of the server extra's modules (SQLAlchemy) and of gRPC: when a command runs.
        from sqlalchemy.exc import OperationalError, SQLAlchemyError

        from arena.matches import RefereeError
        from workers.bots.artifacts import SubmissionError
        from workers.planning import PlanError
        from workers.sandbox import SandboxError
        from workers.store.engine import StoreError
        from workers.store.repo import ConflictError, NotFoundError

        store = _Store()
        try:
            if lazy:
                return int(command(args, store) or 0)
            engine = store.writer() if creates else store.reader()
            return int(command(args, engine) or 0)
        except OperationalError as exc:
            where = store.where()
            reason = " ".join(str(exc.orig).split())  # the driver's message spans lines
            print(f"sixnimmt: error: cannot reach {where}: {reason}", file=sys.stderr)
            return 2
        except (
            NotFoundError,
            ConflictError,
            SubmissionError,
            PlanError,
            StoreError,
            LeagueCommandError,
            SandboxError,  # no bubblewrap: nothing runs unconfined, and the reason is one line
            RefereeError,  # a block's referee could not be started or reached
            SQLAlchemyError,
        ) as exc:
            print(f"sixnimmt: error: {tables.printable(exc, lines=True)}", file=sys.stderr)
            return 2
        finally:
            store.close()

    return run


def _migrate(engine: Any) -> None:
    # Alembic: only once a store is opened.
    from workers.store.migrate import is_current, upgrade

    if not is_current(engine):
        upgrade(engine)


def cmd_create(args: argparse.Namespace, store: _Store) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from arena.matches import default_time_control, time_control_text
    from workers import league as leagues
    from workers.bots import entrants
    from workers.cli import formats as formats_cli
    from workers.planning import deals
    from workers.store import repo
    from workers.store.engine import describe

    refs = [r.strip() for r in args.bots.split(",") if r.strip()]
    options = formats_cli.create_options(args)  # sampled and ladder: their options, checked
    stopping = options.pop("stopping", None) or _adaptive_stopping(args)
    planned = leagues.prepare(  # every check first: a league that fails stores nothing, not even a store
        store.existing(),
        args.name,
        refs,
        variant=args.variant,
        config=parse_options(args.option),
        table_size=args.table,
        deals=args.deals,
        seed=args.seed,
        fmt=args.format,
        stopping=stopping,
        fresh_processes=args.fresh_processes,
        **options,
    )
    engine = store.writer()
    created = leagues.store(engine, planned)
    blocks = repo.blocks_of(engine, created.id)
    info = {
        "league": created.name,
        "variant": created.variant,
        "format": created.format,
        "entrants": entrants.labels(created.entrants),
        "store": describe(engine),
        "blocks": len(blocks),
        "matches": len(blocks) * created.table_size,
        "fresh_processes": created.fresh_processes,
        "deals": _deals_shown(engine, created),
        "time_control": default_time_control(),
    }
    if stopping is not None:
        info["stopping"] = stopping
    shown = formats_cli.format_status(engine, created)
    if shown:
        info[shown[0]] = shown[1]
    if args.json:
        print(json.dumps(info))
    else:
        print(
            f"league {info['league']}: {info['variant']}, {info['format']}, {len(created.entrants)} entrants,"
            f" {info['blocks']} blocks, {info['matches']} matches"
            + (
                f" in the first round; adaptive until {stopping['until_confident']:g} confident,"
                f" at most {stopping['max_deals']} deals"
                if stopping and stopping["kind"] == "adaptive"
                else " in the placement round"
                if stopping and stopping["kind"] == "ladder"
                else ""
            )
        )
        print(time_control_text(**info["time_control"]), "(SIXNIMMT_DECISION_MS, SIXNIMMT_BANK_MS)")
        if shown:
            formats_cli.print_format_status(created, *shown)
        print(deals.describe(info["deals"]))
    return 0


def _deals_shown(engine: Any, league: Any) -> dict[str, Any]:
    """The league's seed and deal key as every output shows them: a commitment until it is finished."""
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.planning import deals
    from workers.store import repo

    finished = repo.league_phase(engine, league.id) == "finished"
    return deals.shown(league.seed, league.deal_key, finished)


def cmd_verify_deals(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers import league as leagues
    from workers.planning import deals
    from workers.store import repo

    league = repo.find_league(engine, args.name)
    if repo.league_phase(engine, league.id) != "finished":
        raise LeagueCommandError(
            f"league {league.name} is not finished: its seed and deal key are {deals.SECRET_UNTIL}"
        )
    checked = leagues.verify_deals(engine, league)
    wrong = [c for c in checked if not c.ok]
    shown = deals.shown(league.seed, league.deal_key, True)
    if args.json:
        print(
            json.dumps(
                {
                    "league": league.name,
                    **shown,
                    "blocks": len(checked),
                    "ok": not wrong,
                    "wrong": [
                        {
                            "block": c.block,
                            "stored": c.stored,
                            "expected": list(c.expected),
                            "matches_ok": c.matches_ok,
                        }
                        for c in wrong
                    ],
                }
            )
        )
        return 0 if not wrong else 1
    print(f"league {league.name}: {deals.describe(shown)}")
    for c in wrong:
        print(
            f"block {c.block}: stored deal seed {c.stored}, the seed and key give"
            f" {' or '.join(map(str, c.expected))}"
            + ("" if c.matches_ok else "; a match played another seed")
        )
    print(
        f"{len(checked) - len(wrong)} of {len(checked)} blocks play the deals the seed and key give"
        + ("" if not wrong else f"; {len(wrong)} do not")
    )
    return 0 if not wrong else 1


def _adaptive_stopping(args: argparse.Namespace) -> dict[str, Any] | None:
    """The stopping rule of ``--until-confident``/``--max-deals``, checked; ``None`` for a fixed plan."""
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.planning import PlanError, adaptive

    if args.until_confident is None and args.max_deals is None:
        return None
    if args.until_confident is None or args.max_deals is None:
        raise LeagueCommandError("an adaptive league needs both --until-confident and --max-deals")
    try:
        rule = adaptive.rule(args.until_confident, args.max_deals)
    except PlanError as exc:
        raise LeagueCommandError(str(exc)) from None
    return rule.to_json()


def cmd_run(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers import league as leagues
    from workers.cli import bottest
    from workers.store import repo

    settings = load_settings()
    league = repo.find_league(engine, args.name)
    todo = [b for b in repo.blocks_of(engine, league.id) if b.status != "done"]
    celery = running.on_celery(settings, local=args.local)
    interrupted = False
    counts: dict[str, int] = {}
    with progress_bar(len(todo), "blocks", args.json) as bar, running.keep_interrupts() as pressed:
        try:
            if celery:
                # Said once Ctrl-C is kept: from here on it leaves the league to the workers.
                bar.write(
                    f"sixnimmt: following league {league.name} on the workers"
                    " (Ctrl-C stops following; the workers go on)",
                    file=sys.stderr,
                )
            counts = running.play(
                engine, league, settings, bar, local=args.local, processes=args.processes, interrupted=pressed
            )
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        print(
            f"sixnimmt: stopped following league {league.name}: "
            + (
                "the workers go on with it ('sixnimmt league status' shows how far)"
                if celery
                else "queued blocks cancelled, claims released ('sixnimmt league run' goes on)"
            )
            + "; the standings so far:",
            file=sys.stderr,
        )
        if not repo.league_counts(engine, league.id)["matches"]:
            print(f"league {league.name}: no results stored yet")
            return 130
    status = repo.league_counts(engine, league.id)
    league = repo.find_league(engine, league.name)  # a ladder takes entrants while it runs
    if bottest.is_test(league):  # an SPRT test: its verdict, not a league table
        info = bottest.report(engine, league)
        if args.json:
            print(json.dumps({**info, "ran": counts, "status": status}))
        else:
            bottest.print_report(info)
        return 130 if interrupted else 0
    rows, fitted = leagues.compute_table(engine, league)  # the workers stored it as they played
    if args.json:
        extra = {"interrupted": True} if interrupted else {}
        print(
            json.dumps(
                {"league": league.name, "ran": counts, "status": status, **extra, **_public(rows, fitted)}
            )
        )
        return 130 if interrupted else 0
    print(
        f"league {league.name}: {status['matches']} matches stored ({'Celery' if celery else 'local pool'})"
    )
    _print_standings(league, rows, fitted)
    return 130 if interrupted else 0


def cmd_start(args: argparse.Namespace, engine: Any) -> int:
    # Celery's broker client and the store (server extra): when the command runs, not at start-up.
    from kombu.exceptions import OperationalError as BrokerError

    from workers.queue import runner
    from workers.store import repo

    settings = load_settings()
    if not settings.broker_url:
        raise LeagueCommandError(
            "league start hands a league to Celery workers: set SIXNIMMT_BROKER_URL"
            " (or play it here with 'sixnimmt league run --local')"
        )
    league = repo.find_league(engine, args.name)
    try:
        queued = runner.start(engine, league)
    except BrokerError as exc:
        raise LeagueCommandError(f"cannot reach the broker {_safe_url(settings.broker_url)}: {exc}") from None
    counts = repo.block_counts(engine, league.id)
    info = {
        "league": league.name,
        "queued": queued,
        "blocks": counts,
        "phase": repo.league_phase(engine, league.id),
    }
    if args.json:
        print(json.dumps(info))
        return 0
    done, total = counts.get("done", 0), sum(counts.values())
    print(
        f"league {league.name} handed to the workers: {queued} block{'' if queued == 1 else 's'} queued,"
        f" {done} of {total} stored;"
        f" 'sixnimmt league status {league.name}' shows how far it is"
    )
    return 0


def _safe_url(url: str) -> str:
    # SQLAlchemy (server extra): when the command runs, not at start-up.
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("@")[-1]


def cmd_status(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.bots.accounts import waiting_blocks
    from workers.cli import bottest
    from workers.cli import formats as formats_cli
    from workers.planning import deals
    from workers.play import faults as fault_reasons
    from workers.store import repo
    from workers.store.engine import describe

    league = repo.find_league(engine, args.name)
    status = repo.league_counts(engine, league.id)
    rounds = _rounds_status(engine, league)
    test = bottest.report(engine, league) if bottest.is_test(league) else None
    reasons = fault_reasons.league_reasons(engine, league)
    where = describe(engine)
    waiting = waiting_blocks(engine, league.id)
    dealt = _deals_shown(engine, league)
    if args.json:
        extra = {"adaptive": rounds} if rounds else {"sprt": test} if test else {}
        extra.update([shown] if (shown := formats_cli.format_status(engine, league)) else [])
        info = {"league": league.name, **status, "waiting": waiting, "fault_reasons": reasons, **extra}
        info["store"] = where
        info["deals"] = dealt
        print(json.dumps(tables.printable_json(info)))
        return 0
    blocks = ", ".join(f"{k} {v}" for k, v in sorted(status["blocks"].items()))
    faults = ", ".join(f"{k} {v}" for k, v in status["faults"].items() if v) or "none"
    print(f"league {league.name}: blocks {blocks}; {status['matches']} matches; faults: {faults}")
    print(f"store {where}")
    print(deals.describe(dealt))
    for block in waiting:
        print(f"block {block['block']}: {tables.printable(block['waiting'])}")
    if status["errors"]:
        print("failed blocks:")
        tables.print_table(
            [tables.right("block"), "error"], [[e["block"], e["error"]] for e in status["errors"]]
        )
    if reasons:
        print("fault reasons, by bot:")
        fault_reasons.print_reasons(reasons)
    if rounds:
        _print_rounds(league, rounds)
    if test:
        bottest.print_report(test)
    if shown := formats_cli.format_status(engine, league):
        formats_cli.print_format_status(league, *shown)
    return 0


def _rounds_status(engine: Any, league: Any) -> dict[str, Any] | None:
    """An adaptive league's uncertain pairs and deal budget (``None`` for other leagues)."""
    if not league.stopping or league.stopping.get("kind") != "adaptive":
        return None
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.planning import adaptive
    from workers.store import repo

    planned = repo.blocks_of(engine, league.id)
    return adaptive.status(league, repo.league_results(engine, league.id), len(planned))


def _print_rounds(league: Any, rounds: dict[str, Any]) -> None:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.bots import entrants

    names = entrants.labels(league.entrants)
    print(
        f"adaptive: until {rounds['until_confident']:g} confident; {rounds['deals_planned']} deals planned,"
        f" {rounds['deals_left']} of {rounds['max_deals']} left in the budget"
    )
    print(f"  stopping rule: {rounds['rule']['words']}")
    if rounds["state"] == "first round":
        print("  first round not played yet: no pair can be judged")
        return
    level = f"{rounds['told_apart_at']:.0%}"
    told = (
        f"  told apart at {level} (the standings' '>'): {rounds['told_apart']} of {rounds['pairs']} adjacent"
        " pairs"
        + ("" if rounds["told_apart"] == rounds["pairs"] else "; the others are '=' in 'league standings'")
    )
    if not rounds["uncertain"]:
        print(f"  settled for sorting: all {rounds['pairs']} adjacent pairs; the league plays no more")
        print(told)
        return
    print(f"  {len(rounds['uncertain'])} of {rounds['pairs']} adjacent pairs not yet settled for sorting:")
    for pair in rounds["uncertain"]:
        z = "no estimate yet" if pair["z"] is None else f"t {pair['z']:.2f}, settles at {pair['needed']:.2f}"
        print(f"    {names[pair['upper']]} above {names[pair['lower']]}: {z}")
    print(told)
    if rounds["state"] == "budget spent":
        print("  the budget is spent: the league stops with these pairs not settled")


def _public(rows: list[dict[str, Any]], fitted: Any) -> dict[str, Any]:
    """The table as JSON: the fit's rows and pairs, and the online rating alongside."""
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.stats import ranking

    names = {r["position"]: r["bot"] for r in rows}
    out = ranking.to_json(fitted, [names[p] for p in range(len(names))])
    online = {r["position"]: r for r in rows}
    for row in out["standings"]:
        r = online[row["position"]]
        row["online_rating"] = {
            "ordinal": round(r["ordinal"], 4),
            "mu": round(r["mu"], 4),
            "sigma": round(r["sigma"], 4),
        }
    out["online_rating"] = "OpenSkill Plackett-Luce, replayed in match order: for matchmaking, not the order"
    return out


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


UNRANKED = "—"
"""The rank (and score) shown for an entrant without games."""


def _print_standings(league: Any, rows: list[dict[str, Any]], fitted: Any) -> None:
    # The league's modules import the server extra (numpy): loaded when a command runs.
    from workers.stats import ranking

    if not fitted.blocks:
        print(f"league {league.name} has no results yet: nothing to rank ({len(fitted.rows)} entrants)")
        return
    stopping = _stopping_words(league)
    better = "higher" if make_variant(league.variant, league.config).higher_is_better else "lower"
    names = {r["position"]: r["bot"] for r in rows}
    gaps = {pair.upper: pair for pair in fitted.pairs}
    level = f"{fitted.confidence:.0%}"
    lines = []
    for row in fitted.rows:
        pair = gaps.get(row.position)
        if row.rank is None:
            ranks = UNRANKED
        elif row.rank_low == row.rank_high:
            ranks = f"{row.rank_low}"
        else:
            ranks = f"{row.rank_low}-{row.rank_high}"
        if pair is None:
            gap, gap_interval, mark = "", "", ""
        else:
            gap = f"{pair.gap:.2f}"
            gap_interval = tables.interval_text(pair.low, pair.high, "too few blocks")
            mark = ">" if pair.distinct else "="
        missing = "too few blocks" if row.games else UNRANKED
        lines.append(
            [
                UNRANKED if row.rank is None else row.rank,
                names[row.position],
                f"{row.score:.2f}" if row.games else UNRANKED,
                tables.interval_text(row.score_low, row.score_high, missing),
                ranks,
                gap,
                gap_interval,
                mark,
                f"{row.mean_score:.2f}" if row.games else UNRANKED,
                row.games,
                row.faults,
            ]
        )
    right = tables.right
    columns = [right("#"), "bot", right("score"), f"{level} interval", right("ranks"), right("gap to next")]
    columns += [f"gap {level} interval", ">/=", right("mean"), right("games"), right("faults")]
    tables.print_table(columns, lines)
    method = (
        f"score: per game, fitted with a per-game effect (least squares), {better} is better"
        if fitted.method == "ls"
        else "score: Plackett-Luce log strength of the finishing orders, higher is better"
    )
    print(method)
    print(
        f"'>': told apart from the next at {level} (Holm over the adjacent pairs); '=': cannot be told apart;"
        f" ranks: {level} rank interval; mean: plain mean per game; {UNRANKED}: no games, no rank"
    )
    print(f"measured over {ranking.scope(fitted)}")
    if stopping:
        print(f"adaptive league: {stopping}")
    if fitted.note:
        print(f"note: {fitted.note}")


def _stopping_words(league: Any) -> str | None:
    """An adaptive league's stopping rule in words (``None`` for other leagues)."""
    if not league.stopping or league.stopping.get("kind") != "adaptive":
        return None
    from workers.planning import adaptive

    return adaptive.rule_words(float(league.stopping["until_confident"]), len(league.entrants))


def cmd_standings(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers import league as leagues
    from workers.store import repo

    if not 0.5 < args.confidence < 1:
        raise LeagueCommandError(f"--confidence must be between 0.5 and 1, got {args.confidence}")
    league = repo.find_league(engine, args.name)
    rows, fitted = leagues.compute_table(engine, league, method=args.method, confidence=args.confidence)
    names = leagues.entrant_names(league)
    if not fitted.blocks:
        if args.json:
            print(json.dumps({"league": league.name, **_public(rows, fitted), "standings": [], "pairs": []}))
        else:
            _print_standings(league, rows, fitted)
        return 0
    h2h = leagues.head_to_head(engine, league) if args.h2h else None
    if not fitted.blocks:
        print(f"league {league.name} has no results yet: nothing to rank ({len(fitted.rows)} entrants)")
        return
    stopping = _stopping_words(league)
    if args.json:
        out: dict[str, Any] = {"league": league.name, **_public(rows, fitted)}
        if stopping:
            out["stopping_rule"] = stopping
        if h2h is not None:
            out["head_to_head"] = {"entrants": names, "table": h2h, "told_apart": fitted.separated}
        print(json.dumps(out))
        return 0
    _print_standings(league, rows, fitted)
    if h2h is not None:
        print(
            "\nhead-to-head: games where the row bot finished ahead / level / behind the column bot;"
            f" '*': the fit tells the two apart at {fitted.confidence:.0%} (Holm over every pair)"
        )
        lines = []
        for a, name in enumerate(names):
            cells: list[object] = [name]
            for b in range(len(names)):
                if a == b:
                    cells.append("-")
                    continue
                h = h2h[a][b]
                star = "*" if fitted.separated and fitted.separated[a][b] else ""
                cells.append(f"{h['ahead']}/{h['level']}/{h['behind']}{star}")
            lines.append(cells)
        tables.print_table(["bot", *(tables.right(n) for n in names)], lines)
    return 0


def cmd_list(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.store import repo
    from workers.store.engine import describe

    rows = repo.list_leagues(engine)
    if args.json:
        print(json.dumps({"store": describe(engine), "leagues": rows}))
        return 0
    print(f"store {describe(engine)}: {len(rows)} league{'' if len(rows) == 1 else 's'}")
    tables.print_table(
        ["league", "variant", "format", tables.right("blocks done")],
        [[row["name"], row["variant"], row["format"], f"{row['done']}/{row['blocks']}"] for row in rows],
    )
    return 0


def cmd_migrate(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.store.engine import describe

    print(f"store {describe(engine)} is at the newest schema")
    return 0


def cmd_submit(args: argparse.Namespace, store: _Store) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.bots.submit import checked
    from workers.store import repo

    new, report = checked(args.path, args.name, variant=args.variant, entry=args.entry)
    version, created = repo.add_bot_version(  # the store is created only for a bot that passed
        store.writer(), new.bot, new.content, new.sha256, new.entry_point, new.variant
    )
    info = {
        "name": version.bot,
        "version": version.version,
        "sha256": version.sha256,
        "new": created,
        "check": report.to_json(),
    }
    if args.json:
        print(json.dumps(tables.printable_json(info)))
        return 0
    print(report.time_control_line())
    if created:
        print(f"stored {version.bot}@{version.version} ({version.sha256[:12]}), check passed")
    else:
        print(f"{version.bot}@{version.version} holds exactly this code already ({version.sha256[:12]})")
    return 0


def cmd_bot_list(args: argparse.Namespace, engine: Any) -> int:
    # The league's modules import the server extra (SQLAlchemy, numpy): loaded when a command runs,
    # not at start-up, and this module imports without them (register's stand-ins).
    from workers.bots.artifacts import contents
    from workers.store import repo

    rows = repo.list_bots(engine)
    # "size" is the stored archive's (a tar rounds a small bot up to 10240 bytes): count the code too.
    # Each archive is checked against its sha256 as a block checks it before running the code.
    code: dict[str, tuple[int, int] | None] = {}
    changed: dict[str, str] = {}
    for row in rows:
        if row["sha256"] in code or row["sha256"] in changed:
            continue
        try:
            code[row["sha256"]] = contents(
                repo.artifact(engine, row["sha256"], owner=f"{row['name']}@{row['version']}")
            )
        except repo.StoredCodeError as exc:
            changed[row["sha256"]] = str(exc)
    for row in rows:
        found = code.get(row["sha256"])
        row["files"], row["code_bytes"] = found if found else (None, None)
        row["sha256_ok"] = row["sha256"] not in changed
        row["problem"] = changed.get(row["sha256"])
    if args.json:
        print(json.dumps(tables.printable_json(rows)))
        return 0
    lines = []
    for row in rows:
        files, size = row["files"], row["code_bytes"]
        created = (row["created_at"] or "")[:19].replace("T", " ")
        bot = f"{row['name']}@{row['version']}" + (" (retired)" if row.get("retired") else "")
        sha = row["sha256"][:12] + ("" if row["sha256_ok"] else " MISMATCH")
        lines.append([bot, row["variant"], row["entry_point"], files, _bytes(size), sha, created])
    right = tables.right
    tables.print_table(
        ["bot", "variant", "entry point", right("files"), right("size"), "sha256", "stored"], lines
    )
    for problem in dict.fromkeys(changed.values()):
        print(f"stored code changed: {problem}")
    return 0


def _bytes(size: int | None) -> str:
    """A size for people: ``812 B``, ``4.1 KiB``, ``1.2 MiB``; ``?`` when unknown."""
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def cmd_worker(args: argparse.Namespace) -> int:
    settings = load_settings()
    if not settings.broker_url:
        # Celery: only for the worker command, not at start-up.
        from workers.queue.app import NO_BROKER

        print(f"sixnimmt: error: {NO_BROKER}", file=sys.stderr)
        return 2
    port = settings.worker_metrics_port if args.metrics_port is None else args.metrics_port
    if port:
        _multiprocess_metrics()  # before the app's import brings in prometheus_client
    # The referee's compiled hot path, if it may: before the app's tasks import the driver (the
    # pool's processes, forked from this one, inherit it).
    from referee import accel

    accel.enable()
    # Celery: after _multiprocess_metrics, which must run before prometheus_client is imported.
    from workers.queue.app import app, default_node_name

    if port:
        # prometheus_client and the broker's client: only with a metrics port.
        from workers import metrics

        metrics.start_exporter(port, app.conf.broker_url, [app.conf.task_default_queue])
    argv = ["worker", f"--loglevel={args.loglevel}", "--pool=prefork"]
    if args.concurrency:
        argv.append(f"--concurrency={args.concurrency}")
    # Without --hostname: sixnimmt-PID@HOST, not Celery's celery@HOST that two workers on one host share.
    argv.append(f"--hostname={args.hostname or default_node_name()}")
    app.worker_main(argv)
    return 0


def _multiprocess_metrics() -> None:
    """Give every process of this worker an empty ``PROMETHEUS_MULTIPROC_DIR`` (see workers.metrics)."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        for stale in Path(directory).glob("*.db"):  # a previous run's samples
            stale.unlink()
    else:
        directory = tempfile.mkdtemp(prefix="sixnimmt-metrics-")
        atexit.register(shutil.rmtree, directory, True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    values = sys.modules.get("prometheus_client.values")
    if values is not None:  # another command group imported it already: metrics made from now on count
        values.ValueClass = values.get_value_class()
