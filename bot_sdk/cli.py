"""The ``sixnimmt`` command line.

The SDK's own commands live here (``variants``, ``settings``, ``play``, ``verify``, ``replay`` and
``bot run``); other layers add theirs through the ``sixnimmt.commands`` entry-point group (a
function that takes the subparsers), so this module never imports them: the platform
(:mod:`arena.cli`: ``arena``, ``bot play``, ``bot check``), the referee (``referee serve``), the
league (``league``, ``worker``, ``bot submit|list|test``) and the dashboard.

The base install (``pip install sixnimmt-arena``) has the SDK, the referee and the platform;
the league and the dashboard need the ``server`` extra. Without it a plugin whose module cannot
be imported is one stand-in command that says which extra to install, and a command that needs a
library of an extra says so in one line (:func:`missing_extra`), never with a traceback.
Every command that prints results also takes ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import statistics
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeVar

from bot_sdk.loader import BotLoadError, load_bot, spec_label
from bot_sdk.play import BotError, play_match
from games.replay_text import Describe, event_lines
from referee import settings as settings_module
from referee.clikit import tables
from referee.clikit.options import game_options, json_flag, parse_options, positive
from referee.clikit.progress import progress_bar
from referee.clikit.stats import interval_json, t_interval
from referee.rules.config import describe
from referee.rules.errors import ConfigError, RulesError
from referee.rules.registry import VARIANTS, make_variant
from referee.rules.seeding import derive_seed
from referee.rules.transcript import Transcript, replay, verify


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Output into a pipe that its reader closed (``sixnimmt replay FILE | head``) ends the command
    quietly, as it ends any Unix tool: no message, status 141 (128 + SIGPIPE), for every command.
    """
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError as exc:
        if not _stdout_closed():  # some other pipe (a bot's, say): a real error
            print(f"sixnimmt: error: {tables.printable(exc, lines=True)}", file=sys.stderr)
            return 2
        # What is still buffered goes nowhere, so the interpreter's last flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        # A Ctrl-C that lands after the command handled its own (in the flush above, say): the
        # command was interrupted all the same, and says so by its status rather than dying of it.
        return 130


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and not words[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        raise  # main's to judge: the end of a pipe is not an error of the command
    except (RulesError, BotLoadError, BotError, settings_module.SettingsError, OSError) as exc:
        print(f"sixnimmt: error: {tables.printable(exc, lines=True)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if _ours(exc.name):
            raise  # a module of this project missing: a broken install or a bug, not a missing extra
        print(f"sixnimmt: error: {missing_extra(exc.name)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sixnimmt: interrupted", file=sys.stderr)
        return 130


def _stdout_closed() -> bool:
    """Whether standard output is a pipe or socket that nobody reads any more (poll says POLLERR)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # not a real file: a test's capture, say
        return False


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, including those of installed plugins.

    Given the ``command`` about to run, a plugin of that name (``referee``, ``league``, ...)
    that registers it is the only plugin loaded: ``sixnimmt referee serve`` then imports none
    of the league's store (SQLAlchemy and the rest: 0.2 s of every referee process started).
    Any other command, and ``--help``, load every plugin.
    """
    parser = argparse.ArgumentParser(prog="sixnimmt", description="Bots for the 6 nimmt! family.")
    parser.add_argument("--version", action="version", version=f"sixnimmt {_version()}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser("variants", help="list the variants and their options")
    json_flag(p)
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser("settings", help="the SIXNIMMT_* settings, their defaults and current values")
    json_flag(p)
    p.set_defaults(func=cmd_settings)

    p = sub.add_parser("play", help="play games between bots in this process (local arena)")
    p.add_argument("--bots", required=True, help="comma-separated bot specs, one per seat")
    # None: 10 games between bots; the dashboard's `play --human` (its plugin adds the flag) plays 1.
    p.add_argument("--games", type=positive, default=None, help="games to play (default: 10; 1 with --human)")
    game_options(p)
    p.add_argument("--transcripts", type=Path, help="write each game's transcript into this directory")
    json_flag(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("verify", help="check a transcript file: replays it against its seed")
    p.add_argument("transcript", type=Path)
    json_flag(p)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("replay", help="print a transcript's events step by step")
    p.add_argument("transcript", type=Path)
    json_flag(p)
    p.set_defaults(func=cmd_replay)

    global BOT_COMMANDS
    bot = sub.add_parser("bot", help="play, check and run bots as processes under a referee")
    BOT_COMMANDS = bot.add_subparsers(title="bot commands", metavar="COMMAND")
    p = BOT_COMMANDS.add_parser("run", help="run one bot process (reads SIXNIMMT_REFEREE and SIXNIMMT_TOKEN)")
    p.add_argument("bot", nargs="?", help="mybot.py[:Class], a reference name, or a bot.toml's directory")
    p.add_argument("--cmd", metavar="COMMAND", help="a bot in any language: its command line, instead of BOT")
    p.add_argument(
        "--variant", default="classic", help="the game a reference name is of (default: %(default)s)"
    )
    p.add_argument("--referee", help="referee address (default: $SIXNIMMT_REFEREE)")
    p.add_argument("--token", help="entrant token(s), comma-separated (default: $SIXNIMMT_TOKEN)")
    p.set_defaults(func=cmd_run)
    p = BOT_COMMANDS.add_parser(
        "connect", help="keep a bot connected to a server from this machine, with a bot account's API key"
    )
    p.add_argument("bot", help="mybot.py[:Class] or a reference name")
    p.add_argument("--server", required=True, metavar="HOST:PORT", help="the server's referee address")
    p.add_argument("--key", help="the account's API key (default: $SIXNIMMT_API_KEY)")
    p.add_argument(
        "--variant", default="classic", help="the game a reference name is of (default: %(default)s)"
    )
    p.add_argument("--tls", action="store_true", help="TLS, checked against the system's CA certificates")
    p.add_argument("--tls-ca", type=Path, metavar="FILE", help="TLS, checked against this CA certificate")
    p.add_argument(
        "--retries", type=int, metavar="N", help="failed connections in a row, then give up (default: never)"
    )
    p.add_argument("--name", help="name sent in Hello (default: the bot's)")
    json_flag(p)
    p.set_defaults(func=cmd_connect)

    plugins = list(entry_points(group="sixnimmt.commands"))
    named = [entry for entry in plugins if entry.name == command]
    for entry in named:
        _register(sub, entry)
    if not named or command not in sub.choices:
        for entry in plugins:
            if entry not in named:
                _register(sub, entry)
    # The participant's commands of the platform's API (the SDK's own, standard library only).
    from bot_sdk import client

    client.register(BOT_COMMANDS)
    return parser


def _register(sub: Any, entry: Any) -> None:
    """Let one ``sixnimmt.commands`` plugin add its commands; one whose extra is missing is a
    stand-in command that says so."""
    try:
        register = entry.load()
    except ModuleNotFoundError as exc:
        if _ours(exc.name):
            raise
        stand_in(sub, entry.name, exc.name)
        return
    register(sub)


BOT_COMMANDS: Any = None
"""The ``bot`` group's subparsers, so that plugins (the platform's ``bot play``, the league's
``bot submit``) can join it; set by :func:`build_parser` before any plugin registers."""

PACKAGES = frozenset({"referee", "games", "bot_sdk", "arena", "workers", "dashboard", "sixnimmt"})
"""This project's top-level packages: one of them missing is never a missing extra."""


def _ours(module: str | None) -> bool:
    return module is None or module.partition(".")[0] in PACKAGES


def missing_extra(module: str | None, extra: str | None = None) -> str:
    """One line: which extra of ``sixnimmt-arena`` installs ``module``, and the command to run.

    The extra is ``extra`` when the command names its own (Jinja2 is both the ``view`` extra's
    and the ``server`` extra's), else the one whose requirements name the module's distribution;
    a module none of them names (a dependency of a dependency, such as Celery's kombu) is the
    ``server`` extra's, which holds everything that runs leagues and services.
    """
    from importlib.metadata import PackageNotFoundError, requires

    top = (module or "").partition(".")[0]
    if extra is None:
        extra = "server"
        try:
            for line in requires("sixnimmt-arena") or []:
                requirement, _, marker = line.partition(";")
                name = re.match(r"\s*([A-Za-z0-9._-]*)", requirement).group(1)  # type: ignore[union-attr]
                if "extra" in marker and _canonical(name) == _canonical(top):
                    extra = marker.split("==")[-1].strip().strip("'\"")
                    if extra != "dev":
                        break
        except PackageNotFoundError:  # run from a bare tree
            pass
    return f"this command needs {top}, which is not installed: pip install 'sixnimmt-arena[{extra}]'"


def _canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def stand_in(sub: Any, name: str, module: str | None, extra: str | None = None) -> None:
    """A command ``name`` that cannot run without ``module``: listed as not installed, it says
    which extra to install (``extra``, or the one :func:`missing_extra` finds), whatever its
    arguments (a plugin missing its extra registers these)."""
    line = missing_extra(module, extra)
    # No option of its own (not even --help): every argument is one it ignores.
    p = sub.add_parser(
        name, help=f"(not installed: {line.rpartition(': ')[2]})", add_help=False, prefix_chars="\0"
    )
    p.add_argument("arguments", nargs="*")

    def say(args: argparse.Namespace) -> int:
        print(f"{p.prog}: {line}", file=sys.stderr)
        return 2

    p.set_defaults(func=say)


def _version() -> str:
    """The installed package's version (``pip install`` records it; ``unknown`` when run from a bare tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sixnimmt-arena")
    except PackageNotFoundError:
        return "unknown (not installed)"


def bot_specs(text: str) -> list[str]:
    """A comma-separated list of bot specs; :class:`BotLoadError` when it names none."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise BotLoadError("no bots given")
    return specs


def cmd_variants(args: argparse.Namespace) -> int:
    """List the variants with their options."""
    rows = [
        {
            "name": cls.name,
            "aliases": list(cls.aliases),
            "higher_is_better": cls.higher_is_better,
            "options": describe(cls.config_type),
        }
        for cls in VARIANTS
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    lines: list[Sequence[object] | None] = []
    for row in rows:
        if lines:
            lines.append(tables.SECTION)
        first = [
            row["name"],
            ", ".join(row["aliases"]),
            f"{'higher' if row['higher_is_better'] else 'lower'} is better",
        ]
        for opt in row["options"]:
            bounds = "" if opt["min"] is None else f"{opt['min']}…{opt['max']}"
            lines.append([*first, opt["name"], tables.value_text(opt["default"]), bounds, opt["doc"]])
            first = ["", "", ""]
    columns = ["variant", "aliases", "score", "option", "default", "range", "meaning"]
    tables.print_table(columns, lines)
    print("set an option with -o NAME=VALUE, e.g. sixnimmt play --bots random,mc -o professional=true")
    return 0


def cmd_settings(args: argparse.Namespace) -> int:
    """Print every setting with its default and the value in force."""
    current = settings_module.load()
    rows = []
    for row in settings_module.describe():
        value = getattr(current, row["variable"].removeprefix("SIXNIMMT_").lower())
        rows.append({**row, "value": masked(row["variable"], value), "default": masked("", row["default"])})
    if args.json:
        print(json.dumps(tables.printable_json(rows), indent=2))
        return 0
    tables.print_table(
        ["variable", "value", "default", "meaning"],
        [
            [row["variable"], _setting_text(row["value"]), _setting_text(row["default"]), row["doc"]]
            for row in rows
        ],
    )
    return 0


SECRET_SETTING = re.compile(r"_(?:TOKEN|API_KEY)$|PASSWORD|SECRET")
"""A setting whose whole value is a secret (``SIXNIMMT_ADMIN_TOKEN``, ``SIXNIMMT_API_KEY``; not
``…_PER_TOKEN``, a count, nor ``…_TLS_KEY``, a file's path)."""
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/?#@\s]*:)[^/?#\s]*(?=@)")
_QUERY_PASSWORD = re.compile(
    r"(?P<head>[?&;](?:password|passwd|pass|pwd|secret|token|api_key)=)[^&;#\s]*", re.I
)


def masked(variable: str, value: object) -> object:
    """A setting's value as ``settings`` shows it: a secret as ``***``, and in any URL-shaped text the
    password of its user information (``postgresql://user:***@host/db``) and of its query
    (``?password=***``) masked."""
    if not isinstance(value, str) or not value:
        return value
    if SECRET_SETTING.search(variable):
        return "***"
    return _QUERY_PASSWORD.sub(r"\g<head>***", _URL_PASSWORD.sub(r"\g<head>***", value))


def _setting_text(value: object) -> str:
    return "(empty)" if value in ("", None) else str(value)


def cmd_play(args: argparse.Namespace) -> int:
    """Play games between the given seats and print each seat's results."""
    if args.games is None:
        args.games = 10
    specs = bot_specs(args.bots)
    config = parse_options(args.option)
    config.setdefault("players", len(specs))
    game = make_variant(args.variant, config)
    if game.players != len(specs):
        raise ConfigError(f"-o players={game.players} needs {game.players} bots; --bots gave {len(specs)}")
    classes = [load_bot(spec, args.variant) for spec in specs]
    names = [spec_label(s) for s in specs]
    if args.transcripts:
        args.transcripts.mkdir(parents=True, exist_ok=True)
    scores: list[list[int]] = [[] for _ in specs]
    wins = [0] * len(specs)
    digests = []
    with progress_bar(args.games, "games", args.json) as bar:
        for number in range(args.games):
            try:
                result = play_match(game, classes, derive_seed(args.seed, "game", number), names=names)
            except BotError as exc:
                print_bot_traceback(exc)
                raise
            digests.append(result.transcript.digest())
            for seat, score in enumerate(result.outcome.scores):
                scores[seat].append(score)
                wins[seat] += result.outcome.ranks[seat] == 1
            if args.transcripts:
                path = args.transcripts / f"game-{number:04d}.json"
                path.write_text(json.dumps(result.transcript.to_json()))
            bar.update(1)
    intervals = [t_interval(scores[seat]) for seat in range(len(specs))]
    seats = [
        {
            "seat": seat,
            "bot": names[seat],
            "mean_score": round(statistics.fmean(scores[seat]), 3),
            "interval95": interval_json(low, high),
            "wins": wins[seat],
        }
        for seat, (low, high) in enumerate(intervals)
    ]
    if args.json:
        shown = {"variant": game.name, "games": args.games, "seats": seats, "digests": digests}
        print(json.dumps(tables.printable_json(shown)))
        return 0
    print(f"{args.games} game{'' if args.games == 1 else 's'} in this process: {tables.game_summary(game)}")
    tables.print_table(
        [tables.right("seat"), "bot", tables.right("mean score"), "95% interval", tables.right("wins")],
        [
            [
                row["seat"],
                row["bot"],
                f"{row['mean_score']:.2f}",
                tables.interval_text(low, high, "too few games"),
                row["wins"],
            ]
            for row, (low, high) in zip(seats, intervals, strict=True)
        ],
    )
    return 0


def print_bot_traceback(exc: BotError) -> None:
    """The stack trace of the exception a bot raised in the local arena, from the bot's own
    ``decide`` down, on stderr (the one-line error follows it); nothing for an illegal answer."""
    cause = exc.__cause__
    if cause is None or cause.__traceback__ is None:
        return
    # The first frame is the arena's call of decide(): the author's code starts below it.
    below = cause.__traceback__.tb_next or cause.__traceback__
    lines = traceback.format_exception(type(cause), cause, below)
    print(tables.printable("".join(lines), lines=True), file=sys.stderr, end="")


T = TypeVar("T")

MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError, RecursionError)
"""What a malformed transcript can raise on its way through the rules (RulesError is a ValueError)."""


def _load_transcript(path: Path) -> Transcript:
    """A transcript file, or a :class:`RulesError` in one line for any file that is not one."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RulesError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"{path} is not JSON: {exc}") from None
    except RecursionError:
        raise RulesError(f"{path} is nested too deeply to be a transcript") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise RulesError(f"{path} is not a transcript: {exc}") from None
    return _checked(path, lambda: Transcript.from_json(data))


def _checked(path: Path, work: Callable[[], T]) -> T:
    """``work()``, with anything a malformed transcript makes the rules raise as one line."""
    try:
        return work()
    except RulesError as exc:
        raise RulesError(f"{path}: {exc}") from None
    except MALFORMED as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
        raise RulesError(f"{path} is not a valid transcript: {detail}") from None


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify a transcript; exit status 2 and a clear message if it does not hold.

    The digest covers everything but ``meta`` (seat names, fault counts): ``meta`` is neither
    covered nor checked, and the output says so.
    """
    transcript = _load_transcript(args.transcript)
    outcome = _checked(args.transcript, lambda: verify(transcript))
    digest = _checked(args.transcript, transcript.digest)
    if args.json:
        print(json.dumps({"ok": True, "digest": digest, "outcome": outcome.to_json(), "meta_covered": False}))
    else:
        print(f"ok: {digest}  scores {list(outcome.scores)}  ranks {list(outcome.ranks)}")
        print("meta is not covered by the digest (seat names, faults: not checked)")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Print the public events of a transcript, step by step: in words, rows counted from 1 as in
    the dashboard's replay (the game's replay lines); ``--json``: the events as recorded, rows
    counted from 0 as on the wire."""
    from referee.rules.core import event_to_json

    transcript = _load_transcript(args.transcript)
    _, steps = _checked(args.transcript, lambda: replay(transcript))
    if args.json:
        print(json.dumps([[event_to_json(e) for e in events] for events in steps]))
        return 0
    seats = transcript.meta.get("seats")
    names = [str(name) for name in seats] if isinstance(seats, list) else []
    describe = _replay_lines(transcript.variant)
    for number, events in enumerate(steps, 1):
        for line in event_lines(events, names, describe):
            print(f"{number:>4}  {tables.printable(line)}")
    return 0


def _replay_lines(variant: str) -> Describe | None:
    """The ``describe`` hook of the replay module of the game that plays ``variant`` (its
    ``GameSpec.replay``), or None: its events then print as their fields."""
    from referee.rules.spec import game_of, resolve

    game = game_of(variant)
    if game is None or not game.replay:
        return None
    try:
        hook: Describe | None = getattr(resolve(game.replay), "describe", None)
    except Exception:  # a replay that does not load: the events still print, as their fields
        return None
    return hook


def cmd_run(args: argparse.Namespace) -> int:
    """Run one bot process."""
    from bot_sdk import command
    from bot_sdk.run import main as run_main

    if (args.bot is None) == (args.cmd is None):
        raise BotLoadError("name the bot once: BOT (mybot.py, a reference name, a directory) or --cmd CMD")
    spec = args.bot if args.cmd is None else command.command_spec(args.cmd)
    program = command.preload(spec)
    if program is not None:
        return command.run(program, referee=args.referee, token=args.token)
    argv = [args.bot, "--variant", args.variant]
    if args.referee:
        argv += ["--referee", args.referee]
    if args.token:
        argv += ["--token", args.token]
    return run_main(argv)


def cmd_connect(args: argparse.Namespace) -> int:
    """Keep a bot connected to a server (docs/remote.md)."""
    from bot_sdk.connect import ConnectError, connect

    settings = settings_module.load()
    cls = load_bot(args.bot, args.variant)
    try:
        summary = connect(
            cls,
            server=args.server,
            key=args.key or settings.api_key,
            name=args.name or spec_label(args.bot),
            tls=args.tls,
            tls_ca=args.tls_ca,
            retries=args.retries,
            json_lines=args.json,
        )
    except ConnectError as exc:
        print(f"sixnimmt: error: {tables.printable(exc, lines=True)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(f"{summary.games} games over {summary.connections} connections; {summary.errors} errors")
    return 0


if __name__ == "__main__":
    # ``python -m bot_sdk.cli``: run the module as ``bot_sdk.cli``, the one the plugins import
    # (their ``bot`` group is that module's :data:`BOT_COMMANDS`, not this ``__main__``'s copy).
    from bot_sdk.cli import main as _main_of_module

    sys.exit(_main_of_module())
