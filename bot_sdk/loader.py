"""Turn a bot spec into a bot class: a reference bot's name, or a Python file of the author's.

Specs:
- ``random``, ``heuristic``, ``mc`` …: a reference bot of the variant;
- ``path/to/mybot.py``: the file's one :class:`~bot_sdk.bot.Bot` subclass (or the one named
  by a module-level ``BOT`` variable);
- ``path/to/mybot.py:ClassName``: that class.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path

from bot_sdk.bot import Bot
from bot_sdk.bots import REFERENCE_BOTS, reference_bot
from referee.rules.registry import find_variant


class BotLoadError(ValueError):
    """A bot spec names nothing loadable, or the file does not define exactly one bot."""


def spec_label(spec: str) -> str:
    """A short display name for a spec: the reference name or the file's stem (and class)."""
    from bot_sdk import command

    if command.is_command(spec):
        bot = command.parse(spec)
        assert bot is not None
        return bot.label
    path, sep, class_name = spec.partition(".py:")
    if sep:
        return f"{Path(path).stem}:{class_name}"
    return Path(spec).stem if spec.endswith(".py") else spec


def load_bot(spec: str, variant: str = "classic") -> type[Bot]:
    """The bot class a spec names, checked to play ``variant`` (a name or an alias)."""
    variant = find_variant(variant).name
    from bot_sdk import command

    if command.is_command(spec):
        raise BotLoadError(
            f"{spec_label(spec)} is a command bot: it plays as its own process under a referee"
            " (bot play, bot check, arena without --in-process, a league), not inside this one"
        )
    path, _, class_name = spec.partition(".py:")
    if class_name:
        path += ".py"
    if path.endswith(".py"):
        cls = _load_file(Path(path), class_name or None)
    elif spec in REFERENCE_BOTS.get(variant, {}):
        cls = reference_bot(variant, spec)
    else:
        known = ", ".join(REFERENCE_BOTS.get(variant, {}))
        raise BotLoadError(f"unknown bot {spec!r}: not a .py file nor a reference bot of {variant} ({known})")
    if cls.variants and variant not in cls.variants:
        raise BotLoadError(f"{spec} plays {', '.join(cls.variants)}, not {variant}")
    return cls


def _load_file(path: Path, class_name: str | None) -> type[Bot]:
    if not path.is_file():
        raise BotLoadError(f"no bot file at {path}")
    source = path.resolve()
    # A name unique per file content, so two bots with the same file name never clash.
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    module_name = f"sixnimmt_bot_{source.stem}_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, source)
        if spec is None or spec.loader is None:
            raise BotLoadError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise BotLoadError(f"importing {path.name} failed: {import_error(exc, source.parent)}") from exc
    if class_name is None:
        class_name = getattr(module, "BOT", None)
    if class_name is not None:
        cls = getattr(module, class_name, None) if isinstance(class_name, str) else class_name
        if not (inspect.isclass(cls) and issubclass(cls, Bot)):
            raise BotLoadError(f"{path.name}: {class_name} is not a Bot subclass")
        return cls
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Bot) and obj.__module__ == module_name
    ]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise BotLoadError(
            f"{path.name} must define exactly one Bot subclass (found {names});"
            " name one with 'file.py:Class' or a module-level BOT = Class"
        )
    return found[0]


def import_error(exc: BaseException, root: Path) -> str:
    """A bot file's import error in the author's terms: the file (relative to the bot's own
    directory, never where it was unpacked), the line, and the error."""

    def shown(filename: str | None) -> str:
        if not filename:
            return "?"
        try:
            return str(Path(filename).resolve().relative_to(root))
        except ValueError:
            return Path(filename).name

    if isinstance(exc, SyntaxError):
        where = f"{shown(exc.filename)}, line {exc.lineno}: " if exc.lineno else ""
        code = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        return f"{where}{type(exc).__name__}: {exc.msg}{code}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, root)]
    where = f"{shown(frames[-1].filename)}, line {frames[-1].lineno}: " if frames else ""
    return f"{where}{type(exc).__name__}: {exc}"


def _inside(filename: str, root: Path) -> bool:
    try:
        Path(filename).resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True
