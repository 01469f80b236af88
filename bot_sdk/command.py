"""Bots that are programs in any language: a command line, or a directory whose ``bot.toml`` names one.

A command bot is started like a Python bot (one process per entrant, the referee's address and
the entrant's token in ``SIXNIMMT_REFEREE`` and ``SIXNIMMT_TOKEN``) and speaks the protocol of
docs/protocol.md itself. Its specs, accepted wherever a bot spec is run as a process:

- ``cmd:COMMAND`` (what ``--cmd COMMAND`` makes): COMMAND split as a POSIX shell splits words,
  run in the current directory;
- ``DIR`` holding a ``bot.toml``, or ``DIR/bot.toml``: the command the file names, run in DIR.
  This is also how a command bot is submitted and stored in a league: the directory, packed like
  a Python bot's, with ``bot.toml`` as its entry point.

``bot.toml``::

    command = ["node", "dist/bot.js"]   # the program and its arguments (or one string of words)
    name = "node_bot"                   # optional: its name in tables (default: the directory's)

A program named by a path (``./mybot``, ``bin/bot``) is looked up in the bot's directory, any
other on ``PATH``. Errors are :class:`CommandError`, one line each.

A ``bot.toml`` is what gets submitted and run sandboxed, so its command must be one the sandbox
runs without binding anything of the host (:func:`check_confined`): its program is an interpreter
of :data:`INTERPRETERS` (``node``, ``python3``, ``java``, …) or a path inside the bot's directory,
and no argument names a path outside it (``/…``, ``../…``). The sandbox checks it again before it
starts a stored bot (``workers.sandbox``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot_sdk.loader import BotLoadError

BOT_TOML = "bot.toml"
PREFIX = "cmd:"
KEYS = frozenset({"command", "name"})
INTERPRETERS = frozenset(
    {
        *("sh", "bash", "dash"),
        *("node", "nodejs", "deno", "bun"),
        *("python", "python3", "pypy3"),
        *("java", "dotnet", "mono"),
        *("ruby", "perl", "php", "lua", "luajit", "Rscript", "julia", "sbcl", "racket", "swipl", "guile"),
    }
)
"""The programs a sandboxed command may name without a path: the worker's own copy runs them
(``workers.sandbox`` finds it on the worker's ``PATH`` and binds only what it needs, read-only)."""


class CommandError(BotLoadError):
    """A command bot that cannot run: an empty command, a missing program, a malformed ``bot.toml``."""


@dataclass(frozen=True, slots=True)
class CommandBot:
    """A program to start as a bot: its argument vector, the directory it runs in, its label."""

    argv: tuple[str, ...]
    directory: str
    """Absolute: the program starts here (the bot's directory, bound read-only in the sandbox)."""
    label: str
    manifest: str | None = None
    """The ``bot.toml`` it was read from, if any."""

    def program(self) -> str:
        """The program's absolute path; :class:`CommandError` when it does not exist or cannot run."""
        name = self.argv[0]
        if "/" in name:
            path = os.path.join(self.directory, name)
            if not os.path.isfile(path):
                raise CommandError(f"{self.where()}: no program {name!r} in {self.directory}")
            if not os.access(path, os.X_OK):
                raise CommandError(f"{self.where()}: {name} is not executable (chmod +x {name})")
            return os.path.realpath(path)
        found = shutil.which(name)
        if found is None:
            raise CommandError(f"{self.where()}: no program {name!r} on PATH (is it installed?)")
        return found

    def where(self) -> str:
        return self.manifest or f"the command {shlex.join(self.argv)!r}"


def command_spec(command: str) -> str:
    """The spec of ``--cmd COMMAND``."""
    return PREFIX + command


def manifest_of(spec: str) -> Path | None:
    """The ``bot.toml`` a spec names (``DIR`` holding one, or the file itself), else ``None``."""
    if spec.startswith(PREFIX) or spec.endswith(".py") or ".py:" in spec:
        return None
    path = Path(spec)
    if path.name == BOT_TOML and path.is_file():
        return path
    if path.is_dir() and (path / BOT_TOML).is_file():
        return path / BOT_TOML
    return None


def is_command(spec: str) -> bool:
    """Whether ``spec`` names a command bot (``cmd:…``, or a directory with a ``bot.toml``)."""
    return spec.startswith(PREFIX) or manifest_of(spec) is not None


def parse(spec: str, cwd: str | None = None) -> CommandBot | None:
    """The command bot ``spec`` names, or ``None`` for any other spec (a Python bot's)."""
    if spec.startswith(PREFIX):
        text = spec[len(PREFIX) :]
        try:
            argv = tuple(shlex.split(text))
        except ValueError as exc:
            raise CommandError(f"cannot split the command {text!r}: {exc}") from None
        if not argv:
            raise CommandError("the command is empty: --cmd 'PROGRAM ARGUMENTS…'")
        return CommandBot(argv, os.path.abspath(cwd or os.getcwd()), _label(argv))
    manifest = manifest_of(spec)
    if manifest is None:
        return None
    argv, name = read_manifest(manifest)
    directory = os.path.realpath(manifest.parent)
    return CommandBot(argv, directory, name or Path(directory).name, str(manifest))


def read_manifest(path: Path) -> tuple[tuple[str, ...], str | None]:
    """A ``bot.toml``'s command and name; :class:`CommandError` in one line when it is malformed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise CommandError(
            f'{path}: unknown key {unknown[0]!r} (a bot.toml holds command = ["PROGRAM", …] and name)'
        )
    command = data.get("command")
    if isinstance(command, str):
        try:
            argv = tuple(shlex.split(command))
        except ValueError as exc:
            raise CommandError(f"{path}: cannot split the command {command!r}: {exc}") from None
    elif isinstance(command, list) and all(isinstance(part, str) for part in command):
        argv = tuple(command)
    else:
        raise CommandError(
            f"{path} must name the bot's program:"
            ' command = ["PROGRAM", "ARGUMENT", …] or "PROGRAM ARGUMENTS"'
        )
    if not argv or not argv[0]:
        raise CommandError(f"{path}: the command is empty")
    name = data.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise CommandError(f"{path}: name must be a non-empty string")
    check_confined(argv, str(path.parent), str(path))
    return argv, name


def check_confined(argv: Sequence[str], directory: str, where: str) -> None:
    """Refuse, in one line (:class:`CommandError`), a command the sandbox would have to bind host paths for.

    Its program is an interpreter of :data:`INTERPRETERS` or a path relative to ``directory`` that
    stays inside it, links resolved; no argument is an absolute path or climbs out of it with
    ``..``. Arguments are never resolved against the host: they reach the program as written, in
    ``directory``, and a path outside it simply does not exist in the sandbox; refusing them says
    so at submission instead of failing in a league.
    """
    program = argv[0]
    if "/" not in program:
        if program not in INTERPRETERS:
            raise CommandError(
                f"{where}: {program!r} is not an interpreter the sandbox provides"
                f" ({', '.join(sorted(INTERPRETERS, key=str.lower))}); a program of the bot's own"
                f" is named by its path in the bot's directory (./{program})"
            )
    elif program.startswith("/"):
        raise CommandError(
            f"{where}: the program {program!r} is an absolute path; the sandbox binds nothing of the"
            " host: name an interpreter or a program in the bot's directory, relative to it"
        )
    elif _climbs(program):
        raise CommandError(f"{where}: the program {program!r} climbs out of the bot's directory")
    else:
        home = os.path.realpath(directory)
        real = os.path.realpath(os.path.join(home, program))
        if not real.startswith(home.rstrip("/") + "/"):
            raise CommandError(f"{where}: the program {program!r} resolves outside the bot's directory")
    for arg in argv[1:]:
        if arg.startswith("/") or _climbs(arg):
            raise CommandError(
                f"{where}: the argument {arg!r} names a path outside the bot's directory; the sandbox"
                " binds nothing from the command line: name the bot's own files relative to its directory"
            )


def _climbs(path: str) -> bool:
    """Whether a relative path leads out of its directory once normalised (``../x``, ``a/../../x``)."""
    normal = os.path.normpath(path)
    return normal == ".." or normal.startswith("../")


def preload(spec: str) -> CommandBot | None:
    """A command spec checked before anything starts (its ``bot.toml``, its program), else ``None``."""
    bot = parse(spec)
    if bot is not None:
        bot.program()
    return bot


def _label(argv: tuple[str, ...]) -> str:
    """A short name for a command: its script's stem (``node mybot.js`` → ``mybot``), else its program's.

    Read from the words alone: no argument is looked up on the host."""
    for arg in argv[1:]:
        if not arg.startswith("-") and " " not in arg and Path(arg).suffix:
            return Path(arg).stem
    return Path(argv[0]).name


def run(bot: CommandBot, *, referee: str | None = None, token: str | None = None) -> int:
    """Run a command bot in the foreground (``bot run --cmd``): its address and token in its
    environment (by default this process's own), its exit status returned."""
    import subprocess

    environment = dict(os.environ)
    if referee:
        environment["SIXNIMMT_REFEREE"] = referee
    if token:
        environment["SIXNIMMT_TOKEN"] = token
    try:
        return subprocess.run(list(bot.argv), cwd=bot.directory, env=environment, check=False).returncode
    except OSError as exc:
        raise CommandError(f"{bot.where()}: cannot start {bot.argv[0]!r}: {exc.strerror}") from None
