"""The platform's commands: ``sixnimmt arena``, ``sixnimmt bot play`` and ``sixnimmt bot check``.

Registered through the ``sixnimmt.commands`` entry point, as the league's and the referee's are:
the SDK's root (:mod:`bot_sdk.cli`) makes the ``bot`` group with ``bot run`` and never imports
this module. Every command here plays under a real referee (``sixnimmt referee serve`` in its
own process, every bot its own process), or, for ``arena --in-process``, on a local pool.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot_sdk import cli as sdk_cli
from bot_sdk import command
from bot_sdk.loader import BotLoadError, load_bot, spec_label
from referee.clikit import options, tables
from referee.clikit.progress import progress_bar
from referee.clikit.stats import interval_json, t_interval
from referee.rules.errors import RulesError
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed

if TYPE_CHECKING:
    from arena.matches import MatchRun

# The commands import the referee client (gRPC), the tournament and the conformance check when
# they run, not when `sixnimmt --help` registers them.

Command = Callable[[argparse.Namespace], int]


def register(sub: Any) -> None:
    """Add ``arena`` to the root parser and ``play`` and ``check`` to its ``bot`` group."""
    game_options, json_flag, positive = options.game_options, options.json_flag, options.positive

    p = sub.add_parser("arena", help="a local round-robin of bots with duplicate deals")
    p.add_argument(
        "--bots",
        default="random,lowest,highest,heuristic,mc",
        help="comma-separated bot specs: reference names or mybot.py[:Class] (default: %(default)s)",
    )
    p.add_argument(
        "--table",
        type=positive,
        default=None,
        help="seats per table (default: -o players=N if given, else 4, or fewer with fewer bots)",
    )
    p.add_argument(
        "--deals", type=positive, default=2, help="duplicate deals per table (default: %(default)s)"
    )
    p.add_argument(
        "--processes",
        type=positive,
        default=os.cpu_count() or 1,
        help="with --in-process: games played at once (default: this machine's cores, %(default)s)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="play in this machine's process pool instead of a referee with one process per bot",
    )
    _cmd_option(p, "a bot in any language: its command line (repeat for more)", repeat=True)
    game_options(p)
    json_flag(p)
    p.set_defaults(func=_guard(cmd_arena))

    group = sdk_cli.BOT_COMMANDS
    p = group.add_parser("play", help="your bot against others, every bot its own process")
    p.add_argument("bot", nargs="?", help="your bot: mybot.py[:Class], a reference name, a bot.toml's dir")
    _cmd_option(p, "your bot in any language: its command line, instead of BOT")
    p.add_argument(
        "--against", default="random,heuristic,mc", help="opponents, comma-separated (default: %(default)s)"
    )
    p.add_argument("--games", type=positive, default=20, help="games to play (default: %(default)s)")
    _time_control_options(p)
    p.add_argument("--transcripts", type=Path, help="write each game's transcript into this directory")
    p.add_argument("--view", action="store_true", help="then show the games in the replay viewer")
    game_options(p)
    json_flag(p)
    p.set_defaults(func=_guard(_then_view(lambda args: cmd_play(args, options.parse_options(args.option)))))

    p = group.add_parser("check", help="a conformance check: timing, legality, concurrency, shutdown")
    p.add_argument("bot", nargs="?", help="mybot.py[:Class], a reference name, or a bot.toml's directory")
    _cmd_option(p, "a bot in any language: its command line, instead of BOT")
    p.add_argument(
        "--games", type=positive, default=16, help="concurrent matches to play (default: %(default)s)"
    )
    _time_control_options(p)
    game_options(p)
    json_flag(p)
    p.set_defaults(func=_guard(lambda args: cmd_check(args, options.parse_options(args.option))))


def _time_control_options(p: argparse.ArgumentParser) -> None:
    """``--decision-ms`` and ``--bank-ms``; unset, the league's own (``SIXNIMMT_DECISION_MS``,
    ``SIXNIMMT_BANK_MS``: :func:`arena.matches.default_time_control`)."""
    p.add_argument(
        "--decision-ms",
        type=options.positive,
        help="time for one decision before the bank is used (default: SIXNIMMT_DECISION_MS, 2000 unset)",
    )
    p.add_argument(
        "--bank-ms",
        type=int,
        help="time bank per seat and match, used up by late answers (default: SIXNIMMT_BANK_MS, 10000 unset)",
    )


def _time_control(args: argparse.Namespace) -> dict[str, int]:
    """The time control a command plays under: its options over the league's defaults."""
    from arena.matches import default_time_control

    clock = default_time_control()
    if args.decision_ms is not None:
        clock["decision_ms"] = args.decision_ms
    if args.bank_ms is not None:
        if args.bank_ms < 0:
            raise RulesError(f"--bank-ms must be at least 0, got {args.bank_ms}")
        clock["bank_ms"] = args.bank_ms
    return clock


def _cmd_option(p: argparse.ArgumentParser, help: str, *, repeat: bool = False) -> None:
    """``--cmd "node mybot.js"``: a command bot (:mod:`bot_sdk.command`), run in this directory."""
    p.add_argument("--cmd", action="append" if repeat else "store", metavar="COMMAND", help=help)


def _bot_spec(args: argparse.Namespace) -> str:
    """The one bot of ``bot play`` / ``bot check``: BOT or ``--cmd``, exactly one of them."""
    from bot_sdk.command import command_spec

    if (args.bot is None) == (args.cmd is None):
        raise BotLoadError("name your bot once: BOT (mybot.py, a reference name, a directory) or --cmd CMD")
    return args.bot if args.cmd is None else command_spec(args.cmd)


def _then_view(command: Command) -> Command:
    """``bot play --view``: once the games are played, their transcripts (in ``--transcripts DIR``,
    else in a temporary directory) open in ``sixnimmt view``, the dashboard's replay viewer. The
    platform does not import the dashboard: it runs the command through the command line's root,
    which says in one line what to install when the viewer is not."""

    def run(args: argparse.Namespace) -> int:
        if not args.view:
            return command(args)
        import tempfile

        with tempfile.TemporaryDirectory(prefix="sixnimmt-games-") as scratch:
            if args.transcripts is None:
                args.transcripts = Path(scratch)
            status = command(args)
            written = [args.transcripts / f"game-{n:04d}.json" for n in range(args.games)]
            files = [str(path) for path in written if path.exists()]
            if status != 0 or not files:
                return status
            sys.stdout.flush()
            return sdk_cli.main(["view", *(["--json"] if args.json else []), *files])

    return run


def _guard(command: Command) -> Command:
    """A referee that could not be started or reached, or refused a request: one line, status 2."""

    def run(args: argparse.Namespace) -> int:
        from arena.matches import RefereeError

        try:
            return int(command(args) or 0)
        except RefereeError as exc:
            print(f"sixnimmt: error: {tables.printable(exc, lines=True)}", file=sys.stderr)
            return 2

    return run


def _seatings(players: int, games: int) -> list[tuple[int, ...]]:
    """Game ``g`` puts your bot (entrant 0) in seat ``g mod players``; opponents keep their order."""
    out = []
    for g in range(games):
        mine = g % players
        others = iter(range(1, players))
        out.append(tuple(0 if seat == mine else next(others) for seat in range(players)))
    return out


def _entrants(bot: str, against: str) -> tuple[list[str], dict[str, str]]:
    from arena.tournament import unique_names

    specs = [bot, *[s.strip() for s in against.split(",") if s.strip()]]
    names = unique_names([spec_label(spec) for spec in specs])
    return names, dict(zip(names, specs, strict=True))


def _play(
    args: argparse.Namespace, config: dict[str, Any], names: list[str], specs: dict[str, str]
) -> MatchRun:
    from arena.matches import MatchPlan, play_matches
    from arena.tournament import LOCAL_SEAT_KEY

    for spec in specs.values():
        if command.preload(spec) is None:  # fail before starting anything
            load_bot(spec, args.variant)
    config.setdefault("players", len(names))
    if config["players"] != len(names):
        raise RulesError(f"{len(names)} bots given for a {config['players']}-player game")
    make_variant(args.variant, config)
    plans = [
        MatchPlan(tuple(names[e] for e in seating), derive_seed(args.seed, "game", g))
        for g, seating in enumerate(_seatings(len(names), args.games))
    ]
    with progress_bar(len(plans), "games", args.json) as bar:
        return play_matches(
            specs,
            plans,
            variant=args.variant,
            config=config,
            progress=bar.update,
            seat_key=LOCAL_SEAT_KEY,  # the author's own bots: the same seed replays the same games
            **_time_control(args),
        )


def cmd_play(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """Play and print each entrant's results, faults included."""
    from arena.matches import time_control_text

    names, specs = _entrants(_bot_spec(args), args.against)
    clock = _time_control(args)
    run = _play(args, config, names, specs)
    rows = _summarise(names, run)
    if args.transcripts:
        args.transcripts.mkdir(parents=True, exist_ok=True)
        for number, match in enumerate(run.matches):
            (args.transcripts / f"game-{number:04d}.json").write_text(json.dumps(match.transcript))
    if args.json:
        print(
            json.dumps(
                tables.printable_json(
                    {
                        "variant": args.variant,
                        "games": len(run.matches),
                        "time_control": clock,
                        "entrants": rows,
                    }
                )
            )
        )
        return 0
    game = make_variant(args.variant, config)
    games = len(run.matches)
    print(f"{games} game{'' if games == 1 else 's'}, every bot its own process: {tables.game_summary(game)}")
    print(time_control_text(clock["decision_ms"], clock["bank_ms"]))
    right = tables.right
    lines = []
    for row in rows:
        interval = row["interval95"]
        lines.append(
            [
                row["name"],
                row["games"],
                tables.number(row["mean_score"]),
                "too few games" if interval is None else tables.interval_text(*interval, "too few games"),
                tables.number(row["mean_rank"]),
                row["wins"],
                ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none",
            ]
        )
    columns = ["bot", right("games"), right("mean score"), "95% interval", right("mean rank"), right("wins")]
    tables.print_table([*columns, "faults"], lines)
    print_reasons(rows)
    return 0


def print_reasons(rows: list[dict[str, Any]]) -> None:
    """Each entrant's faults by cause (:func:`referee.faults.group_reasons`: one example each, a
    traceback once, with the count) and a bad exit."""
    for row in rows:
        exit = row.get("exit") or {}
        if not row["fault_reasons"] and exit.get("status") in (0, None) and not exit.get("signal"):
            continue
        print(f"\n{tables.printable(row['name'])}:")
        for fault in row["fault_reasons"]:
            example = ", for example" if fault.get("distinct", 1) > 1 else ""
            print(f"  {fault['kind']} ×{fault['count']}{example}:")
            print(textwrap.indent(tables.printable(fault["reason"], lines=True), "    "))
        if exit and (exit.get("status") != 0 or exit.get("signal")):
            stderr = tables.printable(exit.get("stderr") or "", lines=True)
            tail = [line for line in stderr.splitlines() if line.strip()][-10:]
            print(f"  the process {exit['how']}" + ("; its stderr ends:" if tail else ""))
            for line in tail:
                print(f"    {line}")


def _summarise(names: list[str], run: MatchRun) -> list[dict[str, Any]]:
    from arena.conformance import Decisions
    from referee.faults import group_reasons

    rows = []
    for name in names:
        seats = [s for m in run.matches for s in m.seats if s.entrant == name]
        faults: dict[str, int] = {}
        for s in seats:
            for kind, count in s.faults.items():
                faults[kind] = faults.get(kind, 0) + count
        decisions = Decisions.of(seats)
        exit = run.exits.get(name)
        rows.append(
            {
                "name": name,
                "games": len(seats),
                "mean_score": round(statistics.fmean(s.score for s in seats), 3) if seats else None,
                "interval95": interval_json(*t_interval([s.score for s in seats])),
                "mean_rank": round(statistics.fmean(s.rank for s in seats), 3) if seats else None,
                "wins": sum(1 for s in seats if s.rank == 1),
                "faults": faults,
                **decisions.to_json(),
                "exit_code": run.exit_codes.get(name),
                "fault_reasons": [
                    group.to_json() for group in group_reasons(r for s in seats for r in s.reasons)
                ],
                "exit": None if exit is None else exit.to_json() | {"how": exit.describe()},
            }
        )
    return rows


def cmd_check(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """Play many concurrent matches against random bots and report each conformance check."""
    from arena.conformance import check

    with progress_bar(args.games, "games", args.json) as bar:
        report = check(
            _bot_spec(args),
            variant=args.variant,
            config=config,
            games=args.games,
            seed=args.seed,
            progress=bar.update,
            **_time_control(args),
        )
    if args.json:
        print(json.dumps(tables.printable_json(report.to_json())))
    else:
        print(report.time_control_line())
        tables.print_table(
            ["result", "check"], [["PASS" if ok else "FAIL", name] for name, ok in report.checks]
        )
        print(report.decisions.text())
        problem = report.problem()
        if problem:
            print("what went wrong:")
            print(textwrap.indent(tables.printable(problem, lines=True), "  "))
        print("ok" if report.ok else "the bot does not conform")
    return 0 if report.ok else 1


def _table_size(table: int | None, config: dict[str, Any], bots: int) -> int:
    """Seats per table: ``--table``, else ``-o players=N``, else 4 (fewer with fewer bots).

    ``-o players`` more than the bots, or disagreeing with ``--table``, is an error, never a
    smaller game than asked for.
    """
    players = config.get("players")
    if players is None:
        return min(table or 4, bots)
    if not isinstance(players, int) or isinstance(players, bool) or players < 1:
        raise RulesError(f"-o players must be a whole number of players, got {players!r}")
    if table is not None and table != players:
        raise RulesError(f"--table {table} and -o players={players} disagree: give one of them")
    if players > bots:
        raise RulesError(f"-o players={players} needs at least {players} bots, {bots} given")
    return players


def cmd_arena(args: argparse.Namespace) -> int:
    """Play a local round-robin and print the standings."""
    from arena.matches import default_time_control, time_control_text
    from arena.tournament import plan_round_robin, run_tournament
    from bot_sdk.command import command_spec

    specs = sdk_cli.bot_specs(args.bots) + [command_spec(c) for c in args.cmd or []]
    config = options.parse_options(args.option)
    table = _table_size(args.table, config, len(specs))
    blocks = plan_round_robin(len(specs), table, args.deals, args.seed)
    with progress_bar(len(blocks) * table, "games", args.json) as bar:
        table_rows, records = run_tournament(
            specs,
            variant=args.variant,
            config=config,
            table_size=table,
            deals=args.deals,
            seed=args.seed,
            processes=args.processes,
            remote=not args.in_process,
            time_control=default_time_control(),
            progress=bar.update,
        )
    if args.json:
        print(
            json.dumps(
                {
                    "variant": args.variant,
                    "table_size": table,
                    "deals": args.deals,
                    "seed": args.seed,
                    "games": len(records),
                    "standings": [s.to_json() for s in table_rows],
                }
            )
        )
        return 0
    game = make_variant(args.variant, {**config, "players": table})
    how = "in-process" if args.in_process else "every bot its own process under a gRPC referee"
    print(
        f"{len(records)} games, {table} seats a table, {args.deals} duplicate"
        f" deal{'' if args.deals == 1 else 's'} per table, seed {args.seed}, {how}:"
        f" {tables.game_summary(game)}"
    )
    if not args.in_process:
        print(time_control_text(**default_time_control()))
    right = tables.right
    columns = ["#", "bot", "games", "mean score", "95% interval", "mean rank", "wins", "faults"]
    rows = []
    for place, s in enumerate(table_rows, 1):
        interval = tables.interval_text(s.low, s.high, "too few blocks")
        rows.append(
            [
                place,
                s.name,
                s.games,
                f"{s.mean_score:.2f}",
                interval,
                f"{s.mean_rank:.2f}",
                f"{s.wins:.0f}",
                s.faults,
            ]
        )
    tables.print_table([c if c in ("bot", "95% interval") else right(c) for c in columns], rows)
    return 0
