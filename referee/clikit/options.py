"""The options every command shares: ``--json``, a game's ``--variant``/``-o KEY=VALUE``/``--seed``,
counts that must be positive, and ``-o`` pairs read into a config mapping.

The SDK's commands (:mod:`bot_sdk.cli`), the platform's (:mod:`arena.cli`) and the league's
(:mod:`workers.cli`) parse them here, so an option means the same in each. The inverse, a value as
``-o`` spells it, is :func:`referee.clikit.tables.value_text`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from referee.rules.errors import RulesError


def json_flag(p: argparse.ArgumentParser) -> None:
    """``--json``: print JSON instead of text."""
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def game_options(p: argparse.ArgumentParser) -> None:
    """A game's options: ``--variant``, ``-o KEY=VALUE`` (repeated) and ``--seed``."""
    variant_options(p)
    p.add_argument(
        "--seed", type=int, default=1, help="the seed every game's deal derives from (default: %(default)s)"
    )


def variant_options(p: argparse.ArgumentParser) -> None:
    """A variant and its options: ``--variant`` and ``-o KEY=VALUE`` (repeated)."""
    p.add_argument(
        "--variant",
        default="classic",
        help="the game variant (default: %(default)s; 'sixnimmt variants' lists them)",
    )
    p.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a variant option, e.g. -o professional=true -o target=None (see 'sixnimmt variants')",
    )


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs to a config mapping; values are JSON where they parse (None → null)."""
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise RulesError(f"option {pair!r} is not KEY=VALUE")
        text = raw.strip()
        if text in ("None", "none"):
            config[key.strip()] = None
            continue
        try:
            config[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            config[key.strip()] = text
    return config
